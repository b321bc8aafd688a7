// Exception-free JSON helpers for request bodies and responses.
#include "server/json_util.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessera {
namespace {

// nlohmann SAX events -> an ordered_json tree. Members are appended without
// the per-key search ordered_map does; each object is checked for repeated
// keys once, when it closes, by sorting (n log n).
class OrderedBuilder {
    using Container = Json::object_t::Container;  // ordered_map's vector

public:
    Json root;

    bool null() { return put(Json(nullptr)); }
    bool boolean(bool v) { return put(Json(v)); }
    bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
    bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
    bool number_float(Json::number_float_t v, const std::string&) { return put(Json(v)); }
    bool string(std::string& v) { return put(Json(std::move(v))); }
    bool binary(Json::binary_t& v) { return put(Json::binary(std::move(v))); }
    bool start_object(std::size_t) { return open(Json::object()); }
    bool start_array(std::size_t) { return open(Json::array()); }
    bool end_array() { return close(); }
    bool end_object() {
        Container& members = stack_.back()->get_ref<Json::object_t&>();  // indexed by position
        merge_repeated_keys(members);
        return close();
    }
    bool key(std::string& k) {
        auto& members = stack_.back()->get_ref<Json::object_t&>();
        // The vector's emplace_back, not ordered_map::emplace: no search.
        members.Container::emplace_back(std::move(k), nullptr);
        member_ = &members.back().second;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

private:
    // Where the next value goes: the root, the open array, or the member
    // whose key came last. Pointers stay valid: a container only grows while
    // it is the innermost open one, and then no pointer into it is held.
    Json* place(Json v) {
        if (stack_.empty()) {
            root = std::move(v);
            return &root;
        }
        if (stack_.back()->is_array()) {
            stack_.back()->push_back(std::move(v));
            return &stack_.back()->back();
        }
        *member_ = std::move(v);
        return member_;
    }
    bool put(Json v) {
        place(std::move(v));
        return true;
    }
    bool open(Json container) {
        stack_.push_back(place(std::move(container)));
        return true;
    }
    bool close() {
        stack_.pop_back();
        return true;
    }

    static void merge_repeated_keys(Container& members) {
        if (members.size() < 2) return;
        std::vector<uint32_t> order(members.size());
        for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t a, uint32_t b) { return members[a].first < members[b].first; });
        std::vector<bool> dropped(members.size(), false);
        bool any = false;
        for (size_t i = 0; i + 1 < order.size(); ++i) {
            if (members[order[i]].first != members[order[i + 1]].first) continue;
            // Equal keys are adjacent, in input order: the first keeps its
            // slot and takes the value of the next (so, finally, the last).
            members[order[i]].second = std::move(members[order[i + 1]].second);
            dropped[order[i + 1]] = true;
            std::swap(order[i], order[i + 1]);  // the survivor moves on to meet the next repeat
            any = true;
        }
        if (!any) return;
        Container kept;
        for (size_t i = 0; i < members.size(); ++i) {
            if (!dropped[i]) kept.emplace_back(members[i].first, std::move(members[i].second));
        }
        members = std::move(kept);
    }

    std::vector<Json*> stack_;  // open arrays and objects, innermost last
    Json* member_ = nullptr;    // the value slot of the last key read
};

}  // namespace

std::optional<Json> parse_json(std::string_view text) {
    OrderedBuilder builder;
    if (!Json::sax_parse(text, &builder)) return std::nullopt;
    return std::move(builder.root);
}

std::string dump_json(const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool json_nesting_exceeds(std::string_view text, int max_depth) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;  // skip the escaped character
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) return true;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return false;
}

}  // namespace tessera
