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

// A label value as the exposition format quotes it.
std::string escape_label(const std::string& v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        out += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return out;
}

std::string join_labels(const std::string& a, const std::string& b) {
    return a.empty() ? b : b.empty() ? a : a + "," + b;
}

// `extra` (e.g. `expert="3"`), then the source's model label last, so
// readers that take a series' first label keep working.
std::string labels_of(const MetricsSource& src, const std::string& extra = {}) {
    return join_labels(extra, src.model.empty() ? "" : "model=\"" + escape_label(src.model) + "\"");
}

std::string series(const char* name, const std::string& labels) {
    return labels.empty() ? std::string(name) : std::string(name) + "{" + labels + "}";
}

uint64_t load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }
int64_t load(const std::atomic<int64_t>& a) { return a.load(std::memory_order_relaxed); }

using Sources = std::span<const MetricsSource>;

template <class Get>
void family(std::string& out, const char* name, const char* type, const char* help, Sources sources, Get get) {
    header(out, name, type, help);
    for (const MetricsSource& src : sources) sample(out, series(name, labels_of(src)), std::to_string(load(get(*src.metrics))));
}

template <class Get>
void counter(std::string& out, const char* name, const char* help, Sources sources, Get get) {
    family(out, name, "counter", help, sources, get);
}

template <class Get>
void gauge(std::string& out, const char* name, const char* help, Sources sources, Get get) {
    family(out, name, "gauge", help, sources, get);
}

void histogram_samples(std::string& out, const std::string& base, const Histogram& h, const MetricsSource& src,
                       const std::string& extra) {
    const auto bucket = [&](const std::string& le) {
        return base + "_bucket{" + labels_of(src, join_labels(extra, "le=\"" + le + "\"")) + "}";
    };
    for (size_t i = 0; i < h.bounds().size(); ++i) sample(out, bucket(bound(h.bounds()[i])), std::to_string(h.bucket_count(i)));
    const uint64_t count = h.count();
    sample(out, bucket("+Inf"), std::to_string(count));
    sample(out, series((base + "_sum").c_str(), labels_of(src, extra)), number(h.sum()));
    sample(out, series((base + "_count").c_str(), labels_of(src, extra)), std::to_string(count));
}

// `drafter`: label each source with its drafter, e.g. `drafter="ngram"`.
template <class Get>
void histogram(std::string& out, const char* name, const char* help, Sources sources, Get get, bool drafter = false) {
    header(out, name, "histogram", help);
    for (const MetricsSource& src : sources) {
        const std::string extra = drafter ? std::string("drafter=\"") + src.metrics->spec_drafter + "\"" : "";
        histogram_samples(out, name, get(*src.metrics), src, extra);
    }
}

template <class Get>
void spec_counter(std::string& out, const char* name, const char* help, Sources sources, Get get) {
    header(out, name, "counter", help);
    for (const MetricsSource& src : sources) {
        const std::string drafter = std::string("drafter=\"") + src.metrics->spec_drafter + "\"";
        sample(out, series(name, labels_of(src, drafter)), std::to_string(load(get(*src.metrics))));
    }
}

void moe_experts(std::string& out, Sources sources) {
    bool any = false;
    for (const MetricsSource& src : sources) any = any || src.moe != nullptr;
    if (!any) return;
    header(out, "tessera_moe_expert_tokens_total", "counter",
           "Tokens routed to each expert of the mixture-of-experts model, summed over its layers.");
    for (const MetricsSource& src : sources) {
        for (int32_t e = 0; src.moe != nullptr && e < src.moe->n_expert(); ++e) {
            const std::string expert = "expert=\"" + std::to_string(e) + "\"";
            sample(out, series("tessera_moe_expert_tokens_total", labels_of(src, expert)),
                   std::to_string(src.moe->expert_tokens(e)));
        }
    }
}

void latency_families(std::string& out, Sources s) {
    histogram(out, "tessera_time_to_first_token_seconds", "Time from request submission to its first token.", s,
              [](const EngineMetrics& m) -> const Histogram& { return m.ttft; });
    histogram(out, "tessera_inter_token_latency_seconds", "Time between consecutive tokens of one choice.", s,
              [](const EngineMetrics& m) -> const Histogram& { return m.inter_token; });
    histogram(out, "tessera_e2e_request_latency_seconds", "Time from request submission to its final event.", s,
              [](const EngineMetrics& m) -> const Histogram& { return m.e2e_latency; });
}

void kv_families(std::string& out, Sources s) {
    gauge(out, "tessera_num_requests_waiting", "Requests waiting to be scheduled.", s,
          [](const EngineMetrics& m) -> auto& { return m.waiting; });
    gauge(out, "tessera_num_requests_running", "Sequences running in the batch.", s,
          [](const EngineMetrics& m) -> auto& { return m.running; });
    gauge(out, "tessera_kv_blocks_used", "KV cache blocks in use.", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_blocks_used; });
    gauge(out, "tessera_kv_blocks_total", "KV cache blocks in the pool.", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_blocks_total; });
    gauge(out, "tessera_kv_window_blocks_used", "Blocks in use in the sliding-window layers' own KV pool.", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_window_blocks_used; });
    gauge(out, "tessera_kv_window_blocks_total",
          "Blocks of the sliding-window layers' own KV pool (0: those layers use the main pool).", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_window_blocks_total; });
    gauge(out, "tessera_kv_blocks_cached", "KV blocks held only by the prefix cache (evictable).", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_blocks_cached; });
    gauge(out, "tessera_kv_blocks_pinned", "KV block references held by prompt-cache pins (cache_control TTL).", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_blocks_pinned; });
    gauge(out, "tessera_kv_pins", "Live prompt-cache pins.", s, [](const EngineMetrics& m) -> auto& { return m.kv_pins; });
    gauge(out, "tessera_kv_slots_unfilled",
          "Allocated token slots with no token: running sequences' unfilled slots and free halves of split blocks.", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_slots_unfilled; });
    gauge(out, "tessera_kv_block_size", "Tokens per KV block.", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_block_size; });
}

void kv_disk_families(std::string& out, Sources s) {
    counter(out, "tessera_kv_disk_blocks_stored_total", "KV blocks written to the disk tier.", s,
            [](const EngineMetrics& m) -> auto& { return m.kv_disk_stored; });
    counter(out, "tessera_kv_disk_blocks_loaded_total", "KV blocks read back from the disk tier instead of recomputed.", s,
            [](const EngineMetrics& m) -> auto& { return m.kv_disk_loaded; });
    counter(out, "tessera_kv_disk_blocks_rejected_total",
            "Disk tier records found corrupt (header, checksum) and dropped, never loaded.", s,
            [](const EngineMetrics& m) -> auto& { return m.kv_disk_rejected; });
    counter(out, "tessera_kv_disk_files_rejected_total",
            "Disk tier files ignored and started afresh: written by another model, KV type or format, or damaged.", s,
            [](const EngineMetrics& m) -> auto& { return m.kv_disk_files_rejected; });
    counter(out, "tessera_kv_disk_write_errors_total", "Disk tier writes that failed (the block is not kept).", s,
            [](const EngineMetrics& m) -> auto& { return m.kv_disk_write_errors; });
    gauge(out, "tessera_kv_disk_blocks", "KV blocks held by the disk tier.", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_disk_blocks; });
    gauge(out, "tessera_kv_disk_bytes_used", "Bytes of the disk tier file holding blocks.", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_disk_bytes_used; });
    gauge(out, "tessera_kv_disk_bytes_capacity", "Bytes the disk tier may hold (--kv-disk-size).", s,
          [](const EngineMetrics& m) -> auto& { return m.kv_disk_bytes_capacity; });
}

void request_families(std::string& out, Sources s) {
    counter(out, "tessera_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.", s,
            [](const EngineMetrics& m) -> auto& { return m.prefix_queries; });
    counter(out, "tessera_prefix_cache_hits_total", "Prompt tokens served from the prefix cache.", s,
            [](const EngineMetrics& m) -> auto& { return m.prefix_hit_tokens; });
    counter(out, "tessera_prompt_tokens_total", "Prompt tokens of finished and running requests.", s,
            [](const EngineMetrics& m) -> auto& { return m.prompt_tokens; });
    counter(out, "tessera_generation_tokens_total", "Tokens generated.", s,
            [](const EngineMetrics& m) -> auto& { return m.generated_tokens; });
    counter(out, "tessera_preemptions_total", "Sequences preempted to free KV blocks.", s,
            [](const EngineMetrics& m) -> auto& { return m.preemptions; });
    counter(out, "tessera_requests_finished_total", "Requests that ended (any reason).", s,
            [](const EngineMetrics& m) -> auto& { return m.requests_finished; });
    counter(out, "tessera_requests_rejected_total", "Requests refused because the waiting queue was full.", s,
            [](const EngineMetrics& m) -> auto& { return m.requests_rejected; });
    counter(out, "tessera_engine_steps_total", "Forward passes run by the engine.", s,
            [](const EngineMetrics& m) -> auto& { return m.steps; });
    counter(out, "tessera_constrained_requests_total",
            "Requests with a grammar constraint (response_format, guided_*, grammar, json_schema).", s,
            [](const EngineMetrics& m) -> auto& { return m.constrained_requests; });
}

void grammar_and_spec_families(std::string& out, Sources s) {
    histogram(out, "tessera_grammar_compile_seconds", "Time to compile a request's grammar or JSON Schema.", s,
              [](const EngineMetrics& m) -> const Histogram& { return m.grammar_compile; });
    histogram(out, "tessera_grammar_mask_seconds", "Time to compute one token mask of a constrained choice.", s,
              [](const EngineMetrics& m) -> const Histogram& { return m.grammar_mask; });
    counter(out, "tessera_jump_forward_draft_tokens_total",
            "Tokens a grammar forced and the engine proposed as drafts (jump-forward decoding).", s,
            [](const EngineMetrics& m) -> auto& { return m.jump_forward_drafted_tokens; });
    counter(out, "tessera_jump_forward_tokens_total", "Grammar-forced draft tokens the model's sampling confirmed.", s,
            [](const EngineMetrics& m) -> auto& { return m.jump_forward_tokens; });
    spec_counter(out, "tessera_spec_draft_tokens_total", "Speculative tokens drafted and verified.", s,
                 [](const EngineMetrics& m) -> auto& { return m.spec_drafted_tokens; });
    spec_counter(out, "tessera_spec_accepted_tokens_total", "Drafted tokens the target model accepted.", s,
                 [](const EngineMetrics& m) -> auto& { return m.spec_accepted_tokens; });
    histogram(out, "tessera_spec_accepted_length", "Accepted tokens per verified draft.", s,
              [](const EngineMetrics& m) -> const Histogram& { return m.spec_accepted; }, true);
}

}  // namespace

std::string render_prometheus(std::span<const MetricsSource> sources) {
    std::string out;
    latency_families(out, sources);
    kv_families(out, sources);
    kv_disk_families(out, sources);
    request_families(out, sources);
    grammar_and_spec_families(out, sources);
    moe_experts(out, sources);
    return out;
}

std::string render_prometheus(const EngineMetrics& metrics, const MoeCounters* moe) {
    const MetricsSource one{"", &metrics, moe};
    return render_prometheus(std::span<const MetricsSource>(&one, 1));
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
