#!/usr/bin/env python3
"""Golden outputs for tessera's chat-template engine, rendered by Python jinja2.

Renders every chat template (shared fixtures, SmolLM2's template extracted from
its GGUF) over a fixed set of conversations, and a suite of small templates
that pin down engine semantics, the way Hugging Face transformers renders
them: ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True),
globals raise_exception and strftime_now (with a fixed clock), and a tojson
filter equal to transformers' (json.dumps, ensure_ascii=False, no key sort).

Usage: python3 tools/gen_template_golden.py  (from the repository root)
Writes tests/golden/templates/*.json and the extracted *.jinja files.
"""
import json
import os
from datetime import datetime, timezone

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "golden", "templates")
FIXTURES = os.path.join(ROOT, "..", "shared", "fixtures", "chat_templates")
SMOLLM2_GGUF = os.path.join(ROOT, "..", "main", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
NOW = 1721995200  # 2024-07-26T12:00:00Z, what strftime_now() sees


def make_env():
    def raise_exception(message):
        raise TemplateError(message)

    def strftime_now(fmt):
        return datetime.fromtimestamp(NOW, tz=timezone.utc).strftime(fmt)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    # transformers enables the loopcontrols extension ({% break %}, {% continue %}).
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, source, variables):
    try:
        return {"output": env.from_string(source).render(**variables)}
    except Exception as e:  # any jinja2 failure is an expected error for the C++ side
        return {"error": f"{type(e).__name__}: {e}"}


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
            },
            "required": ["location"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a time zone.",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string", "description": "IANA zone"}}},
    },
}


def call(cid, name, args, as_string=False):
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args) if as_string else args}}


def conversations():
    u = lambda text: {"role": "user", "content": text}
    a = lambda text: {"role": "assistant", "content": text}
    s = lambda text: {"role": "system", "content": text}
    tool_msg = lambda cid, text: {"role": "tool", "tool_call_id": cid, "content": text}
    paris = call("call00001", "get_weather", {"location": "Paris", "unit": "celsius"})
    return [
        ("single_user", [u("Hello!")], None, True),
        ("single_user_no_generation_prompt", [u("Hello!")], None, False),
        ("system_and_user", [s("You are a terse assistant."), u("What is 2+2?")], None, True),
        ("multi_turn", [u("Hi"), a("Hello! How can I help?"), u("Tell me a joke.")], None, True),
        ("multi_turn_system_no_generation_prompt",
         [s("Be kind."), u("Hi"), a("Hello!"), u("Bye"), a("Goodbye!")], None, False),
        ("empty_content", [u(""), a(""), u("still there?")], None, True),
        ("unicode", [u("Grüße 👋 — 日本語 \"quotes\" and \\ backslash"), a("Ça va? ✓ ünïcödé"), u("¿Qué?")],
         None, True),
        ("whitespace_content", [s("  padded system  \n"), u("\n  spaced question?  \n")], None, True),
        ("text_parts", [{"role": "user", "content": [{"type": "text", "text": "part one"},
                                                     {"type": "text", "text": "part two"}]}], None, True),
        ("tools_available", [u("What's the weather in Paris?")], [WEATHER_TOOL, TIME_TOOL], True),
        ("tool_call_and_result",
         [u("What's the weather in Paris?"), {"role": "assistant", "content": None, "tool_calls": [paris]},
          tool_msg("call00001", '{"temperature": 21, "condition": "sunny"}')],
         [WEATHER_TOOL], True),
        ("tool_call_string_arguments",
         [s("Use tools when useful."), u("Weather in Oslo?"),
          {"role": "assistant", "content": None,
           "tool_calls": [call("call00002", "get_weather", {"location": "Oslo"}, as_string=True)]},
          tool_msg("call00002", "cold"), a("It is cold in Oslo."), u("Thanks")],
         [WEATHER_TOOL], True),
        ("two_tool_results",
         [u("Weather and time in Tokyo?"),
          {"role": "assistant", "content": None,
           "tool_calls": [call("call00003", "get_weather", {"location": "Tokyo"}),
                          call("call00004", "get_time", {"tz": "Asia/Tokyo"})]},
          tool_msg("call00003", "rainy"), tool_msg("call00004", "21:00")],
         [WEATHER_TOOL, TIME_TOOL], True),
        ("tool_call_no_tools_list",
         [u("Weather?"), {"role": "assistant", "content": None, "tool_calls": [paris]},
          tool_msg("call00001", "sunny")], None, False),
        ("tool_call_with_content_and_named_result",
         [u("Weather in Rome?"),
          {"role": "assistant", "content": "Let me check.", "tool_calls": [call("call00005", "get_weather",
                                                                                {"location": "Rome"}, as_string=True)]},
          {"role": "tool", "tool_call_id": "call00005", "name": "get_weather",
           "content": [{"type": "text", "text": "warm"}, {"type": "text", "text": "dry"}]},
          a("Warm and dry.")],
         [WEATHER_TOOL], True),
        ("tool_call_content_absent",
         [u("Time in Lima?"), {"role": "assistant", "tool_calls": [call("call00006", "get_time", {"tz": "America/Lima"})]},
          tool_msg("call00006", "09:00")],
         [TIME_TOOL], True),
        ("system_only", [s("You are a helpful assistant.")], None, True),
        ("consecutive_users", [u("first"), u("second")], None, True),
    ]


def chat_variables(messages, tools, add_generation_prompt):
    return {"messages": messages, "tools": tools, "documents": None,
            "add_generation_prompt": add_generation_prompt, "bos_token": "<s>", "eos_token": "</s>"}


def flatten(messages):
    """The same normalisation tessera's render_chat applies: text parts joined by newlines."""
    out = []
    for m in messages:
        m = dict(m)
        if isinstance(m.get("content"), list):
            m["content"] = "\n".join(p["text"] for p in m["content"])
        out.append(m)
    return out


def compact(x):
    return json.dumps(x, ensure_ascii=False, separators=(",", ":"))


def as_object(args):
    if not isinstance(args, str):
        return args
    try:
        parsed = json.loads(args)
    except ValueError:
        return args
    return parsed if isinstance(parsed, dict) else args


def map_arguments(messages, fn):
    out = []
    for m in messages:
        m = dict(m)
        if isinstance(m.get("tool_calls"), list):
            m["tool_calls"] = [dict(c, function=dict(c["function"], arguments=fn(c["function"]["arguments"])))
                               for c in m["tool_calls"]]
        out.append(m)
    return out


def plain_form(messages):
    """Tool calls as content text, tool results as user turns (tessera's tool_messages.cpp, form Plain)."""
    out, in_tool_run = [], False
    for m in messages:
        if m.get("role") == "tool":
            response = {k: m[k] for k in ("tool_call_id", "name") if isinstance(m.get(k), str)}
            response["content"] = m["content"] if isinstance(m.get("content"), str) else ""
            text = compact({"tool_response": response})
            if in_tool_run:
                out[-1]["content"] += "\n" + text
            else:
                out.append({"role": "user", "content": text})
            in_tool_run = True
            continue
        in_tool_run = False
        m = dict(m)
        content = m["content"] if isinstance(m.get("content"), str) else ""
        calls = m.pop("tool_calls", None)
        if calls:
            if content:
                content += "\n"
            content += compact({"tool_calls": [{"name": c["function"]["name"],
                                                "arguments": as_object(c["function"]["arguments"])} for c in calls]})
        m["content"] = content
        out.append(m)
    return out


def has_tool_messages(messages):
    return any(m.get("tool_calls") or m.get("role") == "tool" or m.get("content") is None for m in messages)


def render_chat(env, source, messages, tools, agp):
    """tessera's ChatTemplate::render: arguments as objects, then as strings, then no tool syntax at all;
    the first form's error when none renders."""
    messages = flatten(messages)
    forms = [map_arguments(messages, as_object)]
    if has_tool_messages(messages):
        forms += [map_arguments(messages, lambda a: a if isinstance(a, str) else compact(a)), plain_form(messages)]
    results = [render(env, source, chat_variables(form, tools, agp)) for form in forms]
    return next((r for r in results if "output" in r), results[0])


def extract_smollm2():
    from gguf import GGUFReader
    field = GGUFReader(SMOLLM2_GGUF).fields["tokenizer.chat_template"]
    return bytes(field.parts[field.data[0]]).decode("utf-8")


def chat_golden(env, name, source):
    cases = []
    for case_name, messages, tools, agp in conversations():
        case = {"name": case_name, "messages": messages, "tools": tools, "add_generation_prompt": agp,
                "bos_token": "<s>", "eos_token": "</s>"}
        case.update(render_chat(env, source, messages, tools, agp))
        cases.append(case)
    return {"template_name": name, "template": source, "now": NOW, "cases": cases}


# Engine semantics: (name, template, variables). Expected values come from jinja2.
CASES = [
    # whitespace control
    ("ws_trim_blocks", "{% if true %}\nyes\n{% endif %}\nafter", {}),
    ("ws_lstrip_blocks", "a\n    {% if true %}\n    x\n    {% endif %}\nb", {}),
    ("ws_minus_both", "a   {{- 'b' -}}   c", {}),
    ("ws_minus_block", "x  \n  {%- if true -%}  \n y  {%- endif %}\nz", {}),
    ("ws_plus_disables_lstrip", "a\n    {%+ if true %}x{% endif %}", {}),
    ("ws_comment", "a\n  {# comment #}\nb {#- c -#} c", {}),
    ("ws_var_no_trim", "{{ 'a' }}\n{{ 'b' }}\n", {}),
    ("ws_trailing_newline_dropped", "line\n", {}),
    ("ws_crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\n", {}),
    ("raw_block", "{% raw %}{{ not evaluated }}{% endraw %}", {}),
    # literals and operators
    ("literals", "{{ [1, 'a', none, true, 1.5, {'k': [2]}] }}", {}),
    ("arith", "{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 7 / 2 }} {{ 4 / 2 }} {{ 1 + 2 * 3 - 4 }}", {}),
    ("float_print", "{{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1.0 }} {{ 2.5e-7 }} {{ 3 * 1.5 }}", {}),
    ("concat_tilde", "{{ 'a' ~ 1 ~ none ~ true ~ undefined_var }}", {}),
    ("string_plus", "{{ 'a' + 'b' }}{{ [1] + [2] }}{{ 'ab' * 3 }}", {}),
    ("string_plus_int_error", "{{ 'a' + 1 }}", {}),
    ("comparisons", "{{ 1 < 2 < 3 }} {{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1,2] < [1,3] }} {{ 'x' != 'x' }}", {}),
    ("in_not_in", "{{ 'b' in 'abc' }} {{ 2 in [1,2] }} {{ 'k' in {'k':1} }} {{ 3 not in [1] }}", {}),
    ("and_or_values", "{{ 0 or 'x' }} {{ 1 and 'y' }} {{ '' and 'z' }} {{ none or [] }} {{ not 0 }}", {}),
    ("cond_expr", "{{ 'a' if true else 'b' }}{{ 'c' if false else 'd' }}[{{ 'e' if false }}]", {}),
    ("precedence_filter", "{{ 'a' + ' b '|trim }} {{ -3|abs }} {{ not true or true }}", {}),
    ("unicode_string_escapes", "{{ 'caf\\u00e9 \\x41 \\n|' }}{{ \"it's\" }}", {}),
    # attribute, item, slicing
    ("attr_item", "{{ d.a }} {{ d['a'] }} {{ l[0] }} {{ l[-1] }} {{ l.1 }} {{ d.missing }}|", {"d": {"a": 1}, "l": [5, 6]}),
    ("item_out_of_range", "[{{ l[9] }}][{{ 'abc'[5] }}][{{ none.x }}]", {"l": [1]}),
    ("slicing", "{{ l[1:] }} {{ l[:-1] }} {{ l[::2] }} {{ l[::-1] }} {{ l[-2:] }} {{ 'héllo'[1:3] }} {{ 'abc'[::-1] }}",
     {"l": [1, 2, 3, 4, 5]}),
    ("slice_step_zero_error", "{{ [1][::0] }}", {}),
    ("unicode_length", "{{ 'héllo👋'|length }} {{ 'héllo'[1] }}", {}),
    # undefined behaviour
    ("undefined_prints_empty", "[{{ nope }}][{{ nope|default('d') }}][{{ nope is defined }}][{{ nope|length }}]", {}),
    ("undefined_iterates_empty", "{% for x in nope %}x{% else %}empty{% endfor %}", {}),
    ("undefined_falsy", "{% if nope %}t{% else %}f{% endif %}{% if not nope %}!{% endif %}", {}),
    ("undefined_attr_error", "{{ nope.attr }}", {}),
    ("undefined_item_error", "{{ nope['k'] }}", {}),
    ("undefined_plus_error", "{{ nope + 'x' }}", {}),
    ("missing_attr_defined_test", "{{ d.x is defined }} {{ d.x is undefined }} {{ d.a is defined }}", {"d": {"a": 1}}),
    ("none_printing", "{{ none }} {{ n }} {{ n is none }}", {"n": None}),
    # tests
    ("tests_types", "{{ 'a' is string }} {{ {} is mapping }} {{ [] is iterable }} {{ 1 is number }} {{ 1.5 is float }} "
                    "{{ 1 is integer }} {{ true is boolean }} {{ 'a' is sequence }} {{ 5 is iterable }}", {}),
    ("tests_values", "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} {{ true is true }} "
                     "{{ 0 is false }} {{ 1 is eq 1 }} {{ 2 is gt 1 }} {{ 'a' is in 'abc' }} {{ 'ab' is lower }}", {}),
    ("test_not", "{{ 1 is not none }} {{ none is not none }} {{ x is not defined }}", {}),
    # loops
    ("loop_vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}"
                  "{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}", {}),
    ("loop_prev_next", "{% for x in [1,2,3] %}[{{ loop.previtem }}|{{ loop.nextitem }}]{% endfor %}", {}),
    ("loop_prev_defined", "{% for x in [1,2] %}{{ loop.previtem is defined }}{% endfor %}", {}),
    ("loop_else", "{% for x in [] %}x{% else %}none{% endfor %}", {}),
    ("loop_filter", "{% for x in range(10) if x is odd %}{{ x }}{{ loop.index }}{{ loop.length }},{% endfor %}", {}),
    ("loop_dict_items", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k }}{% endfor %}",
     {"d": {"b": 1, "a": 2}}),
    ("loop_nested", "{% for a in [1,2] %}{% for b in 'xy' %}{{ a }}{{ b }}{{ loop.index }}{% endfor %}{{ loop.index }} {% endfor %}", {}),
    ("loop_unpack_error", "{% for a, b in [[1,2,3]] %}{% endfor %}", {}),
    ("loop_none_error", "{% for x in n %}{% endfor %}", {"n": None}),
    # loop controls (jinja2.ext.loopcontrols)
    ("loop_break", "{% for x in range(10) %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}|", {}),
    ("loop_continue", "{% for x in range(6) %}{% if x is odd %}{% continue %}{% endif %}{{ x }}{{ loop.index }},{% endfor %}", {}),
    ("loop_break_nested_inner_only", "{% for a in [1,2] %}{% for b in [1,2,3] %}{% if b == 2 %}{% break %}{% endif %}"
                                     "{{ a }}{{ b }} {% endfor %}{{ a }}! {% endfor %}", {}),
    ("loop_break_skips_else", "{% for x in [1,2] %}{% break %}{% else %}empty{% endfor %}done", {}),
    # jinja2 runs a for loop's else unless some iteration reached the end of the body.
    ("loop_continue_all_runs_else", "{% for x in [1,2] %}{% continue %}{% else %}else{% endfor %}", {}),
    ("loop_break_second_skips_else", "{% for x in [1,2] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}"
                                     "{% else %}else{% endfor %}", {}),
    ("loop_continue_with_filter", "{% for x in range(8) if x > 1 %}{% if x == 3 %}{% continue %}{% endif %}"
                                  "{{ x }}{{ loop.last }} {% endfor %}", {}),
    ("loop_break_after_namespace_update", "{% set ns = namespace(n=0) %}{% for m in ms %}{% set ns.n = ns.n + 1 %}"
                                          "{% if m == 'stop' %}{% break %}{% endif %}{% endfor %}{{ ns.n }}",
     {"ms": ["a", "b", "stop", "c"]}),
    ("loop_control_ws", "{% for x in 'abc' %}\n  {%- if x == 'b' -%}\n  {% continue %}\n  {%- endif -%}\n  {{ x }}\n{% endfor %}", {}),
    ("loop_continue_in_set_block", "{% for x in [1,2,3] %}{% set s %}{{ x }}{% if x == 2 %}{% continue %}{% endif %}"
                                   "{% endset %}[{{ s }}]{% endfor %}", {}),
    # Command-R7B's shape: a run of tool results gathered by an inner loop that breaks at the first other role.
    ("loop_break_tool_result_run",
     "{% set seen = namespace(ids=[]) %}{% for m in messages %}{% if m.role == 'tool' and m.id not in seen.ids %}"
     "[{{ m.id }}{% for n in messages[loop.index0 + 1:] %}{% if n.role == 'tool' %},{{ n.id }}"
     "{% set seen.ids = seen.ids + [n.id] %}{% else %}{% break %}{% endif %}{% endfor %}]"
     "{% elif m.role != 'tool' %}{{ m.role }}{% endif %}{% endfor %}",
     {"messages": [{"role": "user"}, {"role": "tool", "id": 1}, {"role": "tool", "id": 2}, {"role": "assistant"},
                   {"role": "tool", "id": 3}, {"role": "user"}, {"role": "tool", "id": 4}]}),
    ("loop_break_outside_loop_error", "a{% break %}b", {}),
    ("loop_continue_in_macro_error", "{% for x in [1] %}{% macro m() %}{% continue %}{% endmacro %}{{ m() }}{% endfor %}", {}),
    ("loop_break_in_call_block_error", "{% macro w() %}{{ caller() }}{% endmacro %}{% for x in [1] %}{% call w() %}"
                                       "{% break %}{% endcall %}{% endfor %}", {}),
    # none in filters, tests and comparisons, as jinja2 treats it
    ("none_capitalised_literals", "{{ None }} {{ True }} {{ False }} {{ x != None }} {{ n == None }} {{ n is none }}",
     {"x": 1, "n": None}),
    ("none_selectattr_tests", "{{ ms|selectattr('tool_calls', 'none')|list|length }} "
                              "{{ ms|rejectattr('tool_calls', 'none')|list|length }} "
                              "{{ ms|selectattr('tool_calls')|list|length }} {{ ms|selectattr('tool_calls', 'defined')|list|length }} "
                              "{{ ms|selectattr('content', 'ne', none)|map(attribute='content')|join(',') }} "
                              "{{ ms|selectattr('content', 'equalto', none)|list|length }}",
     {"ms": [{"role": "user", "content": "a", "tool_calls": None}, {"role": "assistant", "content": None,
                                                                      "tool_calls": [{"id": 1}]},
             {"role": "tool", "content": "r"}]}),
    ("none_select_reject", "{{ [none, 1, none, 0]|select('none')|list|length }} {{ [none, 1, 0]|reject('none')|list }} "
                           "{{ [none, 1, '']|select|list }} {{ [none, 1]|reject|list }}", {}),
    ("none_map_attribute", "{{ ms|map(attribute='content')|list }} {{ ms|map(attribute='x', default=none)|list }} "
                           "{{ ms|map(attribute='content')|select('string')|join('+') }}",
     {"ms": [{"content": "a"}, {"content": None}]}),
    ("none_string_join", "{{ none|string }} {{ [none, 'a']|join(',') }} {{ none|tojson }} {{ none ~ '' }} "
                         "{{ none|default('d') }} {{ none|default('d', true) }} {{ [1, none]|tojson }}", {}),
    ("none_in_and_compare", "{{ none in [none] }} {{ none in [0] }} {{ none == none }} {{ none != 0 }} "
                            "{{ 'y' if none else 'n' }} {{ none is not none }}", {}),
    ("none_attr_of_none_value", "{{ m.tool_calls is none }} {{ m.tool_calls is defined }} {{ m.missing is none }} "
                                "{{ m['tool_calls'] or 'empty' }}", {"m": {"tool_calls": None}}),
    ("none_length_error", "{{ none|length }}", {}),
    ("none_sort_error", "{{ [none, 1]|sort }}", {}),
    ("none_selectattr_in_loop", "{% for m in ms|rejectattr('content', 'none') %}{{ m.content }};{% endfor %}"
                                "{% for m in ms if m.content is not none %}{{ loop.index }}{% endfor %}",
     {"ms": [{"content": None}, {"content": "x"}, {"content": None}, {"content": "y"}]}),
    # scoping
    ("set_in_loop_does_not_leak", "{% set x = 1 %}{% for i in range(3) %}{% set x = x + 10 %}{{ x }} {% endfor %}{{ x }}", {}),
    ("set_in_loop_per_iteration", "{% for i in range(3) %}{% if i == 0 %}{% set y = 5 %}{% endif %}[{{ y }}]{% endfor %}", {}),
    ("namespace_escapes_loop", "{% set ns = namespace(n=0, s='') %}{% for i in range(4) %}{% set ns.n = ns.n + i %}"
                               "{% set ns.s = ns.s ~ i %}{% endfor %}{{ ns.n }} {{ ns.s }}", {}),
    ("namespace_kwargs_dict", "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns.c }}|", {}),
    ("set_in_if_visible", "{% if true %}{% set z = 3 %}{% endif %}{{ z }}", {}),
    ("set_overrides_variable", "{% set messages = messages[1:] %}{{ messages|length }}", {"messages": [1, 2, 3]}),
    ("set_tuple", "{% set a, b = [1, 2] %}{{ a }}{{ b }}", {}),
    ("set_block", "{% set body %}  hello {{ 'x' }}  {% endset %}[{{ body }}]", {}),
    ("set_block_filter", "{% set body | trim | upper %}  hello  {% endset %}[{{ body }}]", {}),
    ("set_attr_not_namespace_error", "{% set d = {} %}{% set d.x = 1 %}", {}),
    # macros and call
    ("macro_basic", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Bob') }} {{ greet('Al', punct='?') }}", {}),
    ("macro_missing_arg", "{% macro m(a, b) %}[{{ a }}|{{ b }}|{{ b is defined }}]{% endmacro %}{{ m(1) }}", {}),
    ("macro_recursive", "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n }}*{{ fact(n - 1) }}{% endif %}{% endmacro %}{{ fact(5) }}", {}),
    ("macro_sees_globals", "{% set g = 'G' %}{% macro m() %}{{ g }}{{ v }}{% endmacro %}{{ m() }}", {"v": "V"}),
    ("macro_scope_isolated", "{% macro m() %}{% set q = 1 %}{% endmacro %}{{ m() }}[{{ q }}]", {}),
    ("call_block", "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}inner {{ 1 + 1 }}{% endcall %}", {}),
    ("call_block_args", "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(item) each([1,2]) %}<{{ item }}>{% endcall %}", {}),
    ("filter_block", "{% filter upper %}hello {{ 'world' }}{% endfilter %}", {}),
    # filters
    ("filter_strings", "{{ '  x  '|trim }}|{{ 'Ab'|lower }}{{ 'ab'|upper }} {{ 'hello wORLD-foo'|title }} {{ 'hELLO'|capitalize }} "
                       "{{ 'aaa'|replace('a', 'b', 2) }}", {}),
    ("filter_join_first_last", "{{ [1,2,3]|join(', ') }} {{ [1,2]|first }} {{ [1,2]|last }} {{ 'abc'|first }} {{ []|first }}|", {}),
    ("filter_list_items", "{{ 'ab'|list }} {{ {'a': 1}|items|list|length }} {% for k, v in {'a': 1}|items %}{{ k }}{{ v }}{% endfor %}", {}),
    ("filter_length_count", "{{ [1,2]|length }} {{ 'abc'|count }} {{ {'a':1}|length }}", {}),
    ("filter_select_reject", "{{ [1,2,3,4]|select('odd')|list }} {{ [1,2,3,4]|reject('odd')|list }} {{ [0,1,'',2]|select|list }} "
                             "{{ [1,5,9]|select('gt', 4)|list }}", {}),
    ("filter_selectattr", "{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='c')|join(',') }} "
                          "{{ ms|rejectattr('role', 'eq', 'user')|list|length }} {{ ms|selectattr('flag')|list|length }}",
     {"ms": [{"role": "user", "c": "a"}, {"role": "bot", "c": "b", "flag": True}, {"role": "user", "c": "c"}]}),
    ("filter_map", "{{ [1,2]|map('string')|join('-') }} {{ ['a','b']|map('upper')|list }} {{ ds|map(attribute='x', default=0)|list }}",
     {"ds": [{"x": 1}, {}]}),
    ("filter_tojson", "{{ d|tojson }}|{{ d|tojson(indent=2) }}|{{ 'é\"\\n'|tojson }}|{{ [1.0, none, true]|tojson }}|{{ {}|tojson }}",
     {"d": {"b": [1, {"c": "ü"}], "a": None, "e": []}}),
    ("filter_tojson_undefined_error", "{{ nope|tojson }}", {}),
    ("filter_string_int_float", "{{ 3|string }}{{ '12'|int + 1 }} {{ 'x'|int }} {{ 3.9|int }} {{ '2.5'|float }} {{ 'q'|float }} {{ 2|float }}", {}),
    ("filter_abs_default", "{{ -2|abs }} {{ -2.5|abs }} {{ none|default('d') }} {{ ''|default('e', true) }} {{ x|d('f') }}", {}),
    ("filter_indent", "{{ 'a\nb\n\nc'|indent(2) }}|{{ 'a\nb'|indent(3, true) }}|{{ 'a\n\nb'|indent(1, blank=true) }}", {}),
    ("filter_unique_sort_reverse", "{{ [3,1,2,1]|unique|list }} {{ [3,1,2]|sort }} {{ ['b','A','a']|sort }} {{ [3,1,2]|sort(reverse=true) }} "
                                   "{{ [1,2,3]|reverse|list }} {{ 'abc'|reverse }} {{ ds|sort(attribute='k')|map(attribute='k')|list }}",
     {"ds": [{"k": 2}, {"k": 1}]}),
    ("filter_batch", "{{ [1,2,3,4,5]|batch(2)|list }} {{ [1,2,3]|batch(2, 'x')|list }}", {}),
    ("filter_dictsort", "{% for k, v in d|dictsort %}{{ k }}={{ v }};{% endfor %} {{ d|dictsort(reverse=true) }} "
                        "{{ d|dictsort(by='value') }}", {"d": {"b": 1, "A": 3, "c": 2}}),
    ("tuple_printing", "{{ (1, 2) }} {{ (1,) }} {{ {'a': (1, 'x')} }} {{ () }}", {}),
    ("content_is_string", "{% for m in ms %}{{ m.content is string }}{{ m['content'] is none }}{% endfor %}",
     {"ms": [{"content": "x"}, {"content": None}]}),
    ("text_parts_filter_chain", "{{ parts|selectattr('type', 'equalto', 'text')|map(attribute='text')|join('') }}",
     {"parts": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}),
    ("trailing_commas", "{{ [1, 2,] }} {{ {'a': 1,} }} {{ f(1,) if false else 'ok' }}", {}),
    ("filter_in_concat", "{{ 'a' + x | trim + 'b' }}|{{ x | trim ~ '!' }}", {"x": "  mid  "}),
    ("set_with_ws_control", "a\n  {%- set x = 1 -%}\n  b{{ x }}", {}),
    ("filter_safe", "{{ '<b>'|safe }}", {}),
    ("filter_unknown_error", "{{ 1|nonexistent_filter }}", {}),
    # methods
    ("str_methods", "{{ 'abc'.startswith('a') }} {{ 'abc'.endswith('bc') }} {{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} "
                    "{{ '  x '.strip() }}|{{ 'xxaxx'.lstrip('x') }} {{ 'xxaxx'.rstrip('x') }} {{ 'Ab'.upper() }} {{ 'Ab'.lower() }} "
                    "{{ 'hello world'.title() }} {{ 'a-a'.replace('-', '+') }}", {}),
    ("str_format", "{{ 'x={} y={}'.format(1, 'b') }} {{ '{0}{0}'.format('z') }} {{ '{n}!'.format(n=3) }}", {}),
    ("str_split_last", "{{ 'a</think>b</think>c'.split('</think>')[-1] }}", {}),
    ("dict_methods", "{{ d.get('a') }} {{ d.get('zz') }} {{ d.get('zz', 5) }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }}",
     {"d": {"a": 1, "b": 2}}),
    ("list_append_refused", "{% set l = [] %}{{ l.append(1) }}", {}),
    # globals
    ("range_global", "{{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ range(5, 0, -2)|list }} {{ range(0)|list }}", {}),
    ("raise_exception", "before{{ raise_exception('custom failure') }}", {}),
    ("strftime_now", "{{ strftime_now('%Y-%m-%d %H:%M') }} {{ strftime_now('%d %b %Y') }}", {}),
    ("dict_global", "{{ dict(a=1, b='x') }}", {}),
    # errors at parse time
    ("syntax_unclosed_if", "{% if true %}x", {}),
    ("syntax_bad_expression", "{{ 1 + }}", {}),
    ("syntax_unknown_tag", "{% frobnicate %}", {}),
    ("syntax_unterminated_string", "{{ 'abc }}", {}),
    # sandbox limits jinja2 shares
    ("range_too_big", "{% for i in range(10**9) %}{% endfor %}", {}),
    ("macro_infinite_recursion", "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", {}),
]


def main():
    env = make_env()
    templates = []
    for fname in sorted(os.listdir(FIXTURES)):
        if fname.endswith(".jinja"):
            with open(os.path.join(FIXTURES, fname), encoding="utf-8") as f:
                templates.append((fname[:-6], f.read()))
    smol = extract_smollm2()
    with open(os.path.join(OUT, "SmolLM2-135M-Instruct.jinja"), "w", encoding="utf-8") as f:
        f.write(smol)
    templates.append(("SmolLM2-135M-Instruct", smol))
    total = 0
    for name, source in templates:
        golden = chat_golden(env, name, source)
        total += len(golden["cases"])
        with open(os.path.join(OUT, f"chat_{name}.json"), "w", encoding="utf-8") as f:
            json.dump(golden, f, ensure_ascii=False, indent=1)
    sem = [{"name": n, "template": t, "vars": v, **render(env, t, v)} for n, t, v in CASES]
    with open(os.path.join(OUT, "semantics.json"), "w", encoding="utf-8") as f:
        json.dump({"now": NOW, "cases": sem}, f, ensure_ascii=False, indent=1)
    print(f"{len(templates)} templates x {len(conversations())} conversations = {total} chat cases; "
          f"{len(sem)} semantics cases")


if __name__ == "__main__":
    main()
