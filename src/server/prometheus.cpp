// Prometheus text format: # HELP / # TYPE lines, then samples; histograms as
// cumulative _bucket{le=...} series plus _sum and _count.
#include "server/prometheus.h"

#include <cstdint>
#include <cstdio>

namespace tessera {
namespace {

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// Bucket bounds print as written in the source ("0.005", "1", "120").
std::string bound(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
}

void sample(std::string& out, const std::string& name, const std::string& value) {
    out += name;
    out += ' ';
    out += value;
    out += '\n';
}

void counter(std::string& out, const char* name, const char* help, uint64_t v) {
    header(out, name, "counter", help);
    sample(out, name, std::to_string(v));
}

void gauge(std::string& out, const char* name, const char* help, int64_t v) {
    header(out, name, "gauge", help);
    sample(out, name, std::to_string(v));
}

// `labels`: extra labels for every sample, e.g. `drafter="ngram"` (empty: none).
void histogram(std::string& out, const char* name, const char* help, const Histogram& h,
               const std::string& labels = {}) {
    header(out, name, "histogram", help);
    const std::string base = name;
    const std::string extra = labels.empty() ? "" : labels + ",";
    const std::string own = labels.empty() ? "" : "{" + labels + "}";
    for (size_t i = 0; i < h.bounds().size(); ++i) {
        sample(out, base + "_bucket{" + extra + "le=\"" + bound(h.bounds()[i]) + "\"}", std::to_string(h.bucket_count(i)));
    }
    const uint64_t count = h.count();
    sample(out, base + "_bucket{" + extra + "le=\"+Inf\"}", std::to_string(count));
    sample(out, base + "_sum" + own, number(h.sum()));
    sample(out, base + "_count" + own, std::to_string(count));
}

uint64_t load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }
int64_t load(const std::atomic<int64_t>& a) { return a.load(std::memory_order_relaxed); }

}  // namespace

std::string render_prometheus(const EngineMetrics& m, const MoeCounters* moe) {
    std::string out;
    histogram(out, "tessera_time_to_first_token_seconds", "Time from request submission to its first token.", m.ttft);
    histogram(out, "tessera_inter_token_latency_seconds", "Time between consecutive tokens of one choice.",
              m.inter_token);
    histogram(out, "tessera_e2e_request_latency_seconds", "Time from request submission to its final event.",
              m.e2e_latency);
    gauge(out, "tessera_num_requests_waiting", "Requests waiting to be scheduled.", load(m.waiting));
    gauge(out, "tessera_num_requests_running", "Sequences running in the batch.", load(m.running));
    gauge(out, "tessera_kv_blocks_used", "KV cache blocks in use.", load(m.kv_blocks_used));
    gauge(out, "tessera_kv_blocks_total", "KV cache blocks in the pool.", load(m.kv_blocks_total));
    gauge(out, "tessera_kv_blocks_cached", "KV blocks held only by the prefix cache (evictable).",
          load(m.kv_blocks_cached));
    gauge(out, "tessera_kv_blocks_pinned", "KV block references held by prompt-cache pins (cache_control TTL).",
          load(m.kv_blocks_pinned));
    gauge(out, "tessera_kv_pins", "Live prompt-cache pins.", load(m.kv_pins));
    gauge(out, "tessera_kv_slots_unfilled", "Allocated token slots with no token: running sequences' unfilled slots and free halves of split blocks.",
          load(m.kv_slots_unfilled));
    gauge(out, "tessera_kv_block_size", "Tokens per KV block.", load(m.kv_block_size));
    counter(out, "tessera_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
            load(m.prefix_queries));
    counter(out, "tessera_prefix_cache_hits_total", "Prompt tokens served from the prefix cache.",
            load(m.prefix_hit_tokens));
    counter(out, "tessera_prompt_tokens_total", "Prompt tokens of finished and running requests.",
            load(m.prompt_tokens));
    counter(out, "tessera_generation_tokens_total", "Tokens generated.", load(m.generated_tokens));
    counter(out, "tessera_preemptions_total", "Sequences preempted to free KV blocks.", load(m.preemptions));
    counter(out, "tessera_requests_finished_total", "Requests that ended (any reason).", load(m.requests_finished));
    counter(out, "tessera_requests_rejected_total", "Requests refused because the waiting queue was full.",
            load(m.requests_rejected));
    counter(out, "tessera_engine_steps_total", "Forward passes run by the engine.", load(m.steps));
    counter(out, "tessera_constrained_requests_total",
            "Requests with a grammar constraint (response_format, guided_*, grammar, json_schema).",
            load(m.constrained_requests));
    histogram(out, "tessera_grammar_compile_seconds", "Time to compile a request's grammar or JSON Schema.",
              m.grammar_compile);
    histogram(out, "tessera_grammar_mask_seconds", "Time to compute one token mask of a constrained choice.",
              m.grammar_mask);
    const std::string drafter = std::string("drafter=\"") + m.spec_drafter + "\"";
    header(out, "tessera_spec_draft_tokens_total", "counter", "Speculative tokens drafted and verified.");
    sample(out, "tessera_spec_draft_tokens_total{" + drafter + "}", std::to_string(load(m.spec_drafted_tokens)));
    header(out, "tessera_spec_accepted_tokens_total", "counter", "Drafted tokens the target model accepted.");
    sample(out, "tessera_spec_accepted_tokens_total{" + drafter + "}", std::to_string(load(m.spec_accepted_tokens)));
    histogram(out, "tessera_spec_accepted_length", "Accepted tokens per verified draft.", m.spec_accepted, drafter);
    if (moe != nullptr) {
        header(out, "tessera_moe_expert_tokens_total", "counter",
               "Tokens routed to each expert of the mixture-of-experts model, summed over its layers.");
        for (int32_t e = 0; e < moe->n_expert(); ++e) {
            sample(out, "tessera_moe_expert_tokens_total{expert=\"" + std::to_string(e) + "\"}",
                   std::to_string(moe->expert_tokens(e)));
        }
    }
    return out;
}

std::string render_key_usage(const std::vector<KeyUsageRow>& rows) {
    if (rows.empty()) return "";
    struct Series {
        const char* name;
        const char* type;
        const char* help;
        int64_t (*value)(const KeyUsageRow&);
    };
    static constexpr Series kSeries[] = {
        {"tessera_key_requests_total", "counter", "Requests that ended, per API key name.",
         [](const KeyUsageRow& r) { return r.counts.requests; }},
        {"tessera_key_prompt_tokens_total", "counter", "Prompt tokens of ended requests, per API key name.",
         [](const KeyUsageRow& r) { return r.counts.prompt_tokens; }},
        {"tessera_key_cached_tokens_total", "counter", "Prompt tokens read from the prefix cache, per API key name.",
         [](const KeyUsageRow& r) { return r.counts.cached_tokens; }},
        {"tessera_key_completion_tokens_total", "counter", "Tokens generated, per API key name.",
         [](const KeyUsageRow& r) { return r.counts.completion_tokens; }},
        {"tessera_key_rate_limited_total", "counter", "Requests refused with 429 by the key's limits.",
         [](const KeyUsageRow& r) { return r.counts.rate_limited; }},
        {"tessera_key_active_requests", "gauge", "Requests in flight, per API key name.",
         [](const KeyUsageRow& r) { return r.active_requests; }},
    };
    std::string out;
    for (const Series& s : kSeries) {
        header(out, s.name, s.type, s.help);
        for (const KeyUsageRow& r : rows) {
            sample(out, std::string(s.name) + "{key=\"" + r.name + "\"}", std::to_string(s.value(r)));
        }
    }
    return out;
}

}  // namespace tessera
