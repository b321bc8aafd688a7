// The filters (`x | f`), tests (`x is t`), methods (`s.strip()`) and global
// functions (`range`, `strftime_now`, ...) that chat templates call. Each
// returns an error message instead of failing hard; the evaluator adds lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "template/template_limits.h"
#include "template/value.h"

namespace tessera::jinja {

struct CallArgs {
    std::vector<Value> pos;
    std::vector<std::pair<std::string, Value>> kw;
    // Positional argument `index`, or keyword `name`; null when absent.
    const Value* get(size_t index, std::string_view name) const;
};

struct BuiltinEnv {
    const TemplateLimits& limits;
    std::optional<int64_t> now_epoch_seconds;  // strftime_now; none means the real clock
};

Expected<Value> apply_filter(const std::string& name, const Value& input, const CallArgs& args,
                             const BuiltinEnv& env);
Expected<bool> apply_test(const std::string& name, const Value& value, const CallArgs& args);
// A method of a str, dict or list. `found` is false when there is no such method.
Expected<Value> call_method(const Value& obj, const std::string& name, const CallArgs& args,
                            const BuiltinEnv& env, bool& found);
// range, dict, strftime_now; namespace and raise_exception are the evaluator's.
Expected<Value> call_global(const std::string& name, const CallArgs& args, const BuiltinEnv& env);
bool is_global_function(const std::string& name);

}  // namespace tessera::jinja
