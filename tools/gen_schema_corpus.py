#!/usr/bin/env python3
"""The JSON Schema corpus for tessera's grammar engine (issue 26).

Writes tests/golden/grammar/schema_corpus.json: {"schemas": {name: schema},
"refused": {name: {"schema": ..., "keyword": ...}}}. The schemas are written
here for tessera (tool parameters, API payloads, configs, records, and a few
keyword studies) and together use every keyword tessera compiles: the seven
types and type lists, properties/required/additionalProperties (false, true,
a schema), items, minItems/maxItems, enum, const, anyOf, oneOf, $ref/$defs
(recursive too), minLength/maxLength, integer minimum/maximum/exclusive*,
prefixItems, allOf, pattern and format (date, time, date-time,
uuid, email, uri). Strings and arrays are mostly bounded so a small model's
answers end well inside the e2e test's max_tokens. Patterns spell their
classes out ([0-9], not \\d): the oracle's \\d is a Unicode class.

"refused" holds schemas tessera rejects on purpose, each with the keyword its
400 must name. tools/gen_grammar_golden.py walks the schemas with llguidance;
tests/e2e/test_schema_corpus.py sends them all to `tessera serve`.

    .venv/bin/python tools/gen_schema_corpus.py --out tests/golden/grammar/schema_corpus.json
"""
import argparse
import json


def s(max_length=None, min_length=None, **kw):
    out = {"type": "string", **kw}
    if min_length is not None:
        out["minLength"] = min_length
    if max_length is not None:
        out["maxLength"] = max_length
    return out


def obj(props, required=None, additional=False, **kw):
    """An object; every property required unless `required` lists fewer."""
    return {"type": "object", "properties": props, "required": list(props) if required is None else required,
            "additionalProperties": additional, **kw}


def arr(items, max_items=None, min_items=None, **kw):
    out = {"type": "array", "items": items, **kw}
    if min_items is not None:
        out["minItems"] = min_items
    if max_items is not None:
        out["maxItems"] = max_items
    return out


INT = {"type": "integer"}
NAT = {"type": "integer", "minimum": 0}
POS = {"type": "integer", "minimum": 1}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
NULL = {"type": "null"}
DATE = {"type": "string", "format": "date"}
TIME = {"type": "string", "format": "time"}
DATETIME = {"type": "string", "format": "date-time"}
UUID = {"type": "string", "format": "uuid"}
EMAIL = {"type": "string", "format": "email"}
URI = {"type": "string", "format": "uri"}


def enum(*values):
    return {"enum": list(values)}


# Tool (function) parameters, as agents send them.
TOOLS = {
    "tool_get_weather": obj({"city": s(40), "unit": enum("celsius", "fahrenheit")}),
    "tool_search_web": obj({"query": s(80, 1), "max_results": POS, "safe": BOOL}, ["query"]),
    "tool_send_email": obj({"to": arr(EMAIL, 3, 1), "subject": s(60), "body": s(200),
                            "cc": arr(EMAIL, 2)}, ["to", "subject", "body"]),
    "tool_create_event": obj({"title": s(50), "date": DATE, "start": TIME, "duration_minutes": POS,
                              "attendees": arr(EMAIL, 4)}, ["title", "date", "start"]),
    "tool_run_sql": obj({"query": s(200, 1), "read_only": {"const": True}, "timeout_s": NAT}),
    "tool_translate": obj({"text": s(120), "source": s(5, 2), "target": s(5, 2)}, ["text", "target"]),
    "tool_book_flight": obj({"from": s(pattern="^[A-Z]{3}$"), "to": s(pattern="^[A-Z]{3}$"),
                             "date": DATE, "passengers": POS, "cabin": enum("economy", "premium", "business")},
                            ["from", "to", "date", "passengers"]),
    "tool_get_stock_price": obj({"ticker": {"type": "string", "pattern": "^[A-Z]{1,5}$"},
                                 "exchange": enum("NYSE", "NASDAQ", "LSE", None)}),
    "tool_set_thermostat": obj({"room": s(20), "celsius": NUM, "mode": enum("heat", "cool", "auto", "off")}),
    "tool_read_file": obj({"path": s(100, 1), "encoding": enum("utf-8", "latin-1"), "max_bytes": POS}, ["path"]),
    "tool_write_file": obj({"path": s(100, 1), "content": s(300), "append": BOOL}, ["path", "content"]),
    "tool_http_request": obj({"method": enum("GET", "POST", "PUT", "DELETE"), "url": URI,
                              "headers": {"type": "object", "additionalProperties": s(60)},
                              "body": {"type": ["string", "null"], "maxLength": 200}}, ["method", "url"]),
    "tool_calculator": obj({"expression": {"type": "string", "pattern": "^[0-9+*/() .-]{1,40}$"}}),
    "tool_lookup_user": {"type": "object", "properties": {"id": {"anyOf": [UUID, EMAIL]}},
                         "required": ["id"], "additionalProperties": False},
    "tool_resize_image": obj({"url": URI, "width": POS, "height": POS, "keep_aspect": BOOL},
                             ["url", "width"]),
    "tool_create_ticket": obj({"title": s(80, 5), "priority": enum("low", "medium", "high", "urgent"),
                               "labels": arr(s(16), 4), "assignee": {"type": ["string", "null"], "maxLength": 30}}),
    "tool_schedule_reminder": obj({"message": s(100), "at": DATETIME, "repeat": enum("none", "daily", "weekly")},
                                  ["message", "at"]),
    "tool_convert_currency": obj({"amount": NUM, "from": s(pattern="^[A-Z]{3}$"),
                                  "to": s(pattern="^[A-Z]{3}$")}),
    "tool_get_directions": obj({"origin": s(60), "destination": s(60),
                                "mode": enum("driving", "walking", "cycling", "transit"),
                                "avoid": arr(enum("tolls", "highways", "ferries"), 3)}, ["origin", "destination"]),
    "tool_play_music": obj({"query": s(60), "shuffle": BOOL, "volume": NAT}, ["query"]),
    "tool_git_commit": obj({"message": s(72, 1), "files": arr(s(80), 5, 1), "amend": BOOL}, ["message", "files"]),
    "tool_order_food": obj({"restaurant": s(40), "items": arr(obj({"dish": s(40), "quantity": POS}), 4, 1),
                            "delivery": BOOL}),
    "tool_python_exec": obj({"code": s(300), "timeout": {"type": "integer", "exclusiveMinimum": 0}}, ["code"]),
    "tool_kv_set": obj({"key": {"type": "string", "pattern": "^[a-z][a-z0-9_:]{0,30}$"},
                        "value": {"type": ["string", "number", "boolean", "null"], "maxLength": 50},
                        "ttl_seconds": {"type": ["integer", "null"]}}),
    "tool_update_contact": obj({"id": UUID, "email": EMAIL, "phone": {"type": "string",
                                                                      "pattern": "^\\+[0-9]{7,14}$"},
                                "name": s(40)}, ["id"]),
    "tool_summarize": obj({"text": s(400), "style": enum("bullets", "paragraph", "tldr"),
                           "max_words": POS}, ["text"]),
    "tool_list_files": obj({"directory": s(100), "recursive": BOOL, "glob": {"type": ["string", "null"],
                                                                             "maxLength": 20}},
                           ["directory"]),
    "tool_rate_limit_check": obj({"api_key_id": UUID, "window": enum("minute", "hour", "day")}),
    "tool_geocode": obj({"address": s(100)}),
    "tool_no_arguments": obj({}),
}

# API payloads (requests, responses, webhooks).
PAYLOADS = {
    "api_error": obj({"error": obj({"code": NAT, "message": s(100), "details": arr(s(60), 3)}, ["code", "message"])}),
    "api_pagination": obj({"data": arr(obj({"id": UUID, "name": s(30)}), 3), "next_cursor":
                           {"type": ["string", "null"], "maxLength": 24}, "total": NAT}),
    "api_login_request": obj({"username": s(32, 3), "password": s(64, 8), "remember_me": BOOL},
                             ["username", "password"]),
    "api_token_response": obj({"access_token": s(64), "token_type": {"const": "Bearer"},
                               "expires_in": POS, "refresh_token": s(64)}, ["access_token", "token_type",
                                                                            "expires_in"]),
    "api_webhook_payment": obj({"event": enum("payment.succeeded", "payment.failed", "payment.refunded"),
                                "id": UUID, "created": DATETIME,
                                "amount": obj({"value": NAT, "currency": s(pattern="^[A-Z]{3}$")})}),
    "api_github_issue": obj({"title": s(80), "body": s(300), "labels": arr(s(20), 5),
                             "state": enum("open", "closed"), "number": POS}, ["title", "state", "number"]),
    "api_chat_message": obj({"role": enum("system", "user", "assistant", "tool"),
                             "content": {"type": ["string", "null"], "maxLength": 200},
                             "name": s(20)}, ["role", "content"]),
    "api_sensor_reading": obj({"sensor_id": s(pattern="^[A-Z]{2}-[0-9]{4}$"), "timestamp": DATETIME,
                               "temperature": NUM, "humidity": NUM, "battery_low": BOOL}),
    "api_batch_job": obj({"job_id": UUID, "status": enum("queued", "running", "done", "failed"),
                          "progress": NUM, "errors": arr(obj({"line": POS, "reason": s(60)}), 3)},
                         ["job_id", "status"]),
    "api_search_results": obj({"query": s(40), "hits": arr(obj({"url": URI, "title": s(60), "score": NUM},
                                                               ["url", "title"]), 3)}),
    "api_health": obj({"status": enum("ok", "degraded", "down"), "uptime_s": NAT,
                       "checks": {"type": "object", "additionalProperties": enum("pass", "fail")}}),
    "api_geojson_point": obj({"type": {"const": "Feature"},
                              "geometry": obj({"type": {"const": "Point"}, "coordinates": arr(NUM, 2, 2)}),
                              "properties": {"type": "object", "additionalProperties": True}}),
    "api_oauth_client": obj({"client_id": s(32), "redirect_uris": arr(URI, 3, 1),
                             "grant_types": arr(enum("authorization_code", "refresh_token", "client_credentials"),
                                                3, 1), "public": BOOL}),
    "api_patch_ops": arr(obj({"op": enum("add", "remove", "replace"),
                              "path": {"type": "string", "pattern": "^(/[a-z0-9_]{1,12}){1,4}$"},
                              "value": {}}, ["op", "path"]), 4, 1),
    "api_invoice": obj({"invoice_id": s(pattern="^INV-[0-9]{6}$"), "issued": DATE, "due": DATE,
                        "lines": arr(obj({"description": s(50), "quantity": POS, "unit_price": NUM}), 4, 1),
                        "paid": BOOL}),
    "api_rpc_request": obj({"jsonrpc": {"const": "2.0"}, "method": s(30, 1), "params": arr({}, 3),
                            "id": {"type": ["integer", "string"], "maxLength": 10}}),
    "api_rpc_response": {"anyOf": [obj({"jsonrpc": {"const": "2.0"}, "result": {}, "id": INT}),
                                   obj({"jsonrpc": {"const": "2.0"},
                                        "error": obj({"code": INT, "message": s(60)}), "id": INT})]},
    "api_upload_ticket": obj({"upload_url": URI, "expires_at": DATETIME, "max_bytes": POS,
                              "fields": {"type": "object", "additionalProperties": s(40)}}),
    "api_feature_flags": {"type": "object", "additionalProperties": BOOL},
    "api_metrics_sample": obj({"name": s(pattern="^[a-z_]{1,30}$"), "labels": {"type": "object",
                                                                                    "additionalProperties": s(20)},
                               "value": NUM}),
    "api_status_page": obj({"components": arr(obj({"name": s(30), "status": enum("operational", "degraded",
                                                                                  "outage")}), 4),
                            "updated": DATETIME}),
    "api_shipping_quote": obj({"carrier": enum("ups", "fedex", "dhl"), "service": s(30), "price": NUM,
                               "eta": DATE}, ["carrier", "price"]),
    "api_user_profile": obj({"id": UUID, "handle": s(pattern="^@[a-z0-9_]{3,15}$"), "display_name": s(40),
                             "bio": {"type": ["string", "null"], "maxLength": 160}, "homepage": URI,
                             "joined": DATE}, ["id", "handle", "joined"]),
    "api_moderation": obj({"flagged": BOOL, "categories": obj({"hate": BOOL, "violence": BOOL, "spam": BOOL})}),
    "api_embedding_request": obj({"model": s(40), "input": {"anyOf": [s(100), arr(s(60), 3, 1)]},
                                  "dimensions": POS}, ["model", "input"]),
}

# Configuration files.
CONFIGS = {
    "cfg_server": obj({"host": s(40), "port": POS, "tls": obj({"enabled": BOOL, "cert": s(80), "key": s(80)},
                                                             ["enabled"]),
                       "log_level": enum("debug", "info", "warn", "error")}, ["host", "port"]),
    "cfg_database": obj({"driver": enum("postgres", "mysql", "sqlite"), "dsn": s(100),
                         "pool": obj({"min": NAT, "max": POS}), "readonly": BOOL}, ["driver", "dsn"]),
    "cfg_cron_job": obj({"name": s(30), "schedule": {"type": "string",
                                                     "pattern": "^([0-9*/,-]{1,8} ){4}[0-9*/,-]{1,8}$"},
                         "command": s(100), "enabled": BOOL}),
    "cfg_docker_service": obj({"image": s(60), "ports": arr(s(pattern="^[0-9]{2,5}:[0-9]{2,5}$"), 3),
                               "env": {"type": "object", "additionalProperties": s(40)},
                               "restart": enum("no", "always", "on-failure")}, ["image"]),
    "cfg_retry_policy": obj({"max_attempts": POS, "backoff": enum("fixed", "exponential"),
                             "initial_delay_ms": NAT, "retry_on": arr(NAT, 5)}),
    "cfg_feature_rollout": obj({"feature": s(30), "percent": NAT, "allow_list": arr(EMAIL, 3),
                                "starts": DATETIME}, ["feature", "percent"]),
    "cfg_logging": obj({"level": enum("trace", "debug", "info", "warn", "error"), "format": enum("json", "text"),
                        "outputs": arr({"oneOf": [obj({"kind": {"const": "stdout"}}),
                                                  obj({"kind": {"const": "file"}, "path": s(80)})]}, 3, 1)}),
    "cfg_alert_rule": obj({"name": s(40), "expr": s(120), "for": s(pattern="^[0-9]{1,3}[smh]$"),
                           "severity": enum("info", "warning", "critical"),
                           "labels": {"type": "object", "additionalProperties": s(30)}}, ["name", "expr"]),
    "cfg_build_matrix": obj({"os": arr(enum("linux", "macos", "windows"), 3, 1),
                             "compiler": arr(enum("gcc", "clang", "msvc"), 3, 1), "debug": BOOL}),
    "cfg_cache": obj({"backend": enum("memory", "redis", "disk"), "ttl_s": NAT, "max_entries": POS,
                      "redis_url": URI}, ["backend"]),
    "cfg_model_serving": obj({"model": s(60), "max_batch": POS, "quantization": enum("q4_0", "q4_1", "q8_0", None),
                              "threads": POS, "context": POS}, ["model"]),
    "cfg_backup": obj({"paths": arr(s(80), 4, 1), "exclude": arr(s(40), 4), "keep_daily": NAT,
                       "keep_weekly": NAT, "encrypt": BOOL}),
    "cfg_proxy_routes": obj({"routes": arr(obj({"prefix": s(pattern="^/[a-z0-9/]{0,20}$"), "upstream": URI,
                                                "strip_prefix": BOOL}, ["prefix", "upstream"]), 4, 1)}),
    "cfg_editor": obj({"tab_size": POS, "insert_spaces": BOOL, "theme": s(30),
                       "rulers": arr(POS, 3), "font": obj({"family": s(30), "size": POS}, ["family"])}, []),
    "cfg_rate_limits": {"type": "object", "additionalProperties": obj({"requests": POS, "per_seconds": POS})},
    "cfg_i18n": obj({"default_locale": s(pattern="^[a-z]{2}(-[A-Z]{2})?$"),
                     "locales": arr(s(pattern="^[a-z]{2}(-[A-Z]{2})?$"), 5, 1), "fallback": BOOL}),
    "cfg_healthcheck": obj({"url": URI, "interval_s": POS, "timeout_s": POS, "expect_status": arr(POS, 3, 1)}),
    "cfg_package_manifest": obj({"name": s(pattern="^[a-z][a-z0-9-]{0,30}$"),
                                 "version": s(pattern="^[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}$"),
                                 "dependencies": {"type": "object",
                                                  "additionalProperties": s(pattern="^[\\^~]?[0-9.]{1,10}$")},
                                 "private": BOOL}, ["name", "version"]),
    "cfg_scheduler": obj({"timezone": s(40), "quiet_hours": obj({"from": TIME, "to": TIME}),
                          "weekdays": arr(enum("mon", "tue", "wed", "thu", "fri", "sat", "sun"), 7, 1)}),
    "cfg_open_config": obj({"name": s(30)}, additional=True),
}

# Records (rows, documents, forms).
RECORDS = {
    "rec_person": obj({"name": s(40), "age": NAT, "email": EMAIL, "phone": {"type": ["string", "null"],
                                                                            "maxLength": 20}}, ["name", "age"]),
    "rec_address": obj({"street": s(60), "city": s(40), "postal_code": s(pattern="^[0-9]{5}$"),
                        "country": s(pattern="^[A-Z]{2}$")}),
    "rec_book": obj({"isbn": s(pattern="^97[89][0-9]{10}$"), "title": s(80), "authors": arr(s(40), 3, 1),
                     "year": POS, "genres": arr(enum("fiction", "history", "science", "poetry"), 3)},
                    ["isbn", "title", "authors"]),
    "rec_movie_review": obj({"movie": s(60), "rating": enum(1, 2, 3, 4, 5), "review": s(200),
                             "spoilers": BOOL}),
    "rec_recipe": obj({"name": s(50), "servings": POS, "ingredients": arr(obj({"item": s(30), "amount": s(20)}),
                                                                           6, 1),
                       "steps": arr(s(120), 6, 1), "vegetarian": BOOL}),
    "rec_employee": obj({"id": POS, "name": s(40), "department": enum("eng", "sales", "ops", "hr"),
                         "manager_id": {"type": ["integer", "null"]}, "hired": DATE}),
    "rec_transaction": obj({"id": UUID, "account": s(pattern="^[A-Z]{2}[0-9]{2}[A-Z0-9]{8,20}$"),
                            "amount": NUM, "currency": enum("EUR", "USD", "GBP"), "booked_at": DATETIME,
                            "memo": s(80)}, ["id", "account", "amount", "currency", "booked_at"]),
    "rec_medication": obj({"name": s(40), "dose_mg": NUM, "times": arr(TIME, 4, 1), "with_food": BOOL}),
    "rec_vehicle": obj({"vin": s(pattern="^[A-HJ-NPR-Z0-9]{17}$"), "make": s(30), "model": s(30), "year": POS,
                        "electric": BOOL}),
    "rec_product": obj({"sku": s(pattern="^[A-Z]{3}-[0-9]{5}$"), "name": s(60), "price": NUM, "in_stock": BOOL,
                        "tags": arr(s(15), 5), "dimensions": obj({"w": NUM, "h": NUM, "d": NUM})},
                       ["sku", "name", "price"]),
    "rec_flight_status": obj({"flight": s(pattern="^[A-Z0-9]{2}[0-9]{1,4}$"), "scheduled": DATETIME,
                              "status": enum("on_time", "delayed", "cancelled", "boarding"),
                              "gate": {"type": ["string", "null"], "maxLength": 4}}),
    "rec_lab_result": obj({"patient_id": UUID, "test": s(40), "value": NUM, "unit": s(10),
                           "flag": enum("low", "normal", "high", None), "taken": DATE}),
    "rec_course": obj({"code": s(pattern="^[A-Z]{2,4} [0-9]{3}$"), "title": s(60), "credits": POS,
                       "prerequisites": arr(s(pattern="^[A-Z]{2,4} [0-9]{3}$"), 3)}),
    "rec_contact_form": obj({"name": s(40, 1), "email": EMAIL, "message": s(300, 10), "newsletter": BOOL},
                            ["name", "email", "message"]),
    "rec_sports_match": obj({"home": s(30), "away": s(30), "score": arr(NAT, 2, 2), "date": DATE,
                             "overtime": BOOL}),
    "rec_weather_day": obj({"date": DATE, "high_c": NUM, "low_c": NUM,
                            "conditions": enum("sunny", "cloudy", "rain", "snow", "storm"),
                            "precip_mm": NUM}),
    "rec_log_line": obj({"ts": DATETIME, "level": enum("DEBUG", "INFO", "WARN", "ERROR"), "msg": s(120),
                         "request_id": {"anyOf": [UUID, NULL]}}),
    "rec_bank_account": obj({"holder": s(50), "iban": s(pattern="^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$"),
                             "bic": s(pattern="^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$"), "primary": BOOL}),
    "rec_poll": obj({"question": s(100), "options": arr(s(40), 5, 2), "multiple": BOOL, "closes": DATETIME}),
    "rec_citation": obj({"authors": arr(obj({"family": s(30), "given": s(30)}, ["family"]), 4, 1),
                         "title": s(120), "year": POS, "doi": s(pattern="^10\\.[0-9]{4,9}/[-._;()/:A-Za-z0-9]{1,40}$"),
                         "url": URI}, ["authors", "title", "year"]),
}

# Keyword studies: recursion, type lists, const, anyOf/oneOf mixes, the
# exclusive lower bounds, open objects, untyped schemas.
STUDIES = {
    "kw_tree_recursive": {"$defs": {"node": obj({"value": INT, "children": arr({"$ref": "#/$defs/node"}, 2)})},
                          "$ref": "#/$defs/node"},
    "kw_linked_list": {"$defs": {"cell": obj({"head": s(10), "tail": {"anyOf": [{"$ref": "#/$defs/cell"}, NULL]}})},
                       "$ref": "#/$defs/cell"},
    "kw_root_recursion": obj({"name": s(10), "sub": arr({"$ref": "#"}, 2)}, ["name"]),
    "kw_definitions_ref": {"definitions": {"point": obj({"x": NUM, "y": NUM})},
                           "type": "object", "properties": {"from": {"$ref": "#/definitions/point"},
                                                            "to": {"$ref": "#/definitions/point"}},
                           "required": ["from", "to"], "additionalProperties": False},
    "kw_all_seven_types": obj({"s": s(10), "i": INT, "n": NUM, "b": BOOL, "z": NULL, "a": arr(INT, 2),
                               "o": obj({"k": s(5)})}),
    "kw_type_list_all": {"type": ["string", "integer", "number", "boolean", "null", "array", "object"],
                         "maxLength": 12, "items": INT, "maxItems": 2, "properties": {}, "additionalProperties": False},
    "kw_const_values": obj({"version": {"const": 3}, "kind": {"const": "report"}, "draft": {"const": False},
                            "parent": {"const": None}, "ratio": {"const": 0.5}}),
    "kw_enum_mixed": obj({"v": enum("auto", 0, 1.5, True, None, "off")}),
    "kw_oneof_shapes": {"oneOf": [obj({"circle": obj({"r": NUM})}),
                                  obj({"rect": obj({"w": NUM, "h": NUM})}),
                                  obj({"label": s(10)})]},
    "kw_anyof_scalars": arr({"anyOf": [INT, BOOL, s(6)]}, 4, 1),
    "kw_exclusive_minimums": obj({"non_negative": {"type": "integer", "exclusiveMinimum": -1},
                                  "positive": {"type": "integer", "exclusiveMinimum": 0},
                                  "at_least_one": POS, "at_least_zero": NAT}),
    "kw_optional_props": obj({"a": INT, "b": s(5), "c": BOOL, "d": NULL}, ["c"]),
    "kw_none_required": obj({"x": INT, "y": INT}, []),
    "kw_additional_true": obj({"id": INT}, additional=True),
    "kw_additional_schema": obj({"id": INT}, additional=arr(INT, 2)),
    "kw_map_only": {"type": "object", "additionalProperties": {"type": "integer"}},
    "kw_untyped_array": arr({}, 3),
    "kw_empty_array_only": arr(INT, 0),
    "kw_exact_items": arr(s(4, 4), 3, 3),
    "kw_min_length_only": obj({"code": s(min_length=6, max_length=6), "note": s(min_length=2)}),
    "kw_formats": obj({"d": DATE, "t": TIME, "dt": DATETIME, "u": UUID, "e": EMAIL, "w": URI}),
    "kw_pattern_search": obj({"has_digit": {"type": "string", "pattern": "[0-9]"},
                              "prefixed": {"type": "string", "pattern": "^ab"}, "suffixed": {"type": "string",
                                                                                            "pattern": "yz$"}}),
    "kw_pattern_alternation": obj({"color": {"type": "string", "pattern": "^(#[0-9a-f]{6}|rgb\\([0-9]{1,3},[0-9]{1,3},[0-9]{1,3}\\))$"}}),
    "kw_nested_arrays": arr(arr(arr(INT, 2), 2), 2, 1),
    "kw_annotations": {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Note",
                       "description": "A note with annotations only", "type": "object",
                       "properties": {"text": {"type": "string", "maxLength": 40, "description": "body",
                                               "examples": ["hi"]}, "pinned": {"type": "boolean", "default": False}},
                       "required": ["text", "pinned"], "additionalProperties": False},
    "kw_top_level_string": s(20),
    "kw_top_level_enum": enum("yes", "no", "maybe"),
}

# Integer ranges, tuples and allOf (supported since these were written;
# appended, so the walks of the schemas above stay as they were).
BOUNDS = {
    "kw_integer_range": obj({"port": {"type": "integer", "minimum": 1, "maximum": 65535},
                             "retries": {"type": "integer", "minimum": 0, "maximum": 10},
                             "offset": {"type": "integer", "minimum": -128, "exclusiveMaximum": 128}}),
    "kw_integer_above_five": obj({"n": {"type": "integer", "minimum": 5}, "m": {"type": "integer", "maximum": -3}}),
    "kw_prefix_items_tuple": {"type": "array", "prefixItems": [INT, s(5), {"type": "boolean"}], "items": False,
                              "minItems": 2},
    "kw_prefix_items_then_items": {"type": "array", "prefixItems": [s(8)], "items": INT, "maxItems": 4},
    # Parts closed only where they list every property, so the plain
    # intersection JSON Schema means is what tessera's merge compiles.
    "kw_all_of_objects": {"allOf": [{"type": "object", "properties": {"a": INT}, "required": ["a"]},
                                    obj({"a": {"type": "integer", "minimum": 0, "maximum": 9}, "b": INT})]},
    "kw_all_of_ref": {"$defs": {"named": {"type": "object", "properties": {"name": s(12)}, "required": ["name"]}},
                      "allOf": [{"$ref": "#/$defs/named"},
                                obj({"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0, "maximum": 150}})]},
}

CORPUS = {**TOOLS, **PAYLOADS, **CONFIGS, **RECORDS, **STUDIES, **BOUNDS}

# Schemas tessera refuses on purpose: the keyword the 400 must name.
REFUSED = {
    "number_minimum": (obj({"x": {"type": "number", "minimum": 0}}), "minimum"),
    "unique_items": (arr(INT, 3, uniqueItems=True), "uniqueItems"),
    "not_keyword": ({"not": {"type": "string"}}, "not"),
    "if_then_else": ({"if": obj({"a": INT}), "then": obj({"b": INT})}, "if"),
    "pattern_properties": ({"type": "object", "patternProperties": {"^x-": s(5)}}, "patternProperties"),
    "min_properties": ({"type": "object", "additionalProperties": INT, "minProperties": 1}, "minProperties"),
    "multiple_of": (obj({"n": {"type": "integer", "multipleOf": 5}}), "multipleOf"),
    "format_hostname": (obj({"h": {"type": "string", "format": "hostname"}}), "hostname"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    assert len(CORPUS) == sum(map(len, (TOOLS, PAYLOADS, CONFIGS, RECORDS, STUDIES, BOUNDS))), "duplicate name"
    out = {"schemas": CORPUS, "refused": {k: {"schema": v, "keyword": w} for k, (v, w) in REFUSED.items()}}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"{len(CORPUS)} schemas, {len(REFUSED)} refused")


if __name__ == "__main__":
    main()
