// ModelRegistry: one mutex over small maps (lookups copy a shared_ptr and
// leave); removed models wait in `retiring_` until the registry holds the
// last reference, and are destroyed outside the lock by the reaper thread.
#include "server/model_registry.h"

#include <algorithm>
#include <chrono>

namespace tessera {

ModelRegistry::ModelRegistry(size_t max_models) : max_models_(max_models), reaper_([this] { reap_loop(); }) {}

ModelRegistry::~ModelRegistry() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    wake_.notify_all();
    reaper_.join();
}

bool ModelRegistry::name_taken(const std::string& name) const {
    if (by_name_.count(name)) return true;
    return std::any_of(loading_.begin(), loading_.end(), [&](const ModelSpec& s) {
        const auto names = s.names();
        return std::find(names.begin(), names.end(), name) != names.end();
    });
}

Status ModelRegistry::reserve(const ModelSpec& spec) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& n : spec.names()) {
        if (name_taken(n)) return Status::error("a model named '" + n + "' is already served or loading");
    }
    if (models_.size() + loading_.size() >= max_models_) {
        return Status::error(ErrorKind::LimitExceeded,
                             "this server serves at most " + std::to_string(max_models_) + " models (--max-models)");
    }
    loading_.push_back(spec);
    return ok_status();
}

void ModelRegistry::release(const ModelSpec& spec) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = std::find_if(loading_.begin(), loading_.end(), [&](const ModelSpec& s) { return s.name == spec.name; });
    if (it != loading_.end()) loading_.erase(it);
}

void ModelRegistry::add(ServedModelPtr model) {
    release(model->spec);
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& n : model->spec.names()) by_name_[n] = model;
    models_.push_back(std::move(model));
}

ServedModelPtr ModelRegistry::find(std::string_view name) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (name.empty()) return models_.empty() ? nullptr : models_.front();
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
}

bool ModelRegistry::remove(std::string_view name) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        const auto it = by_name_.find(name);
        if (it == by_name_.end()) return false;
        const ServedModelPtr model = it->second;
        for (const std::string& n : model->spec.names()) by_name_.erase(n);
        models_.erase(std::find(models_.begin(), models_.end(), model));
        retiring_.push_back(model);
    }
    wake_.notify_all();
    return true;
}

std::vector<ServedModelPtr> ModelRegistry::models() const {
    std::lock_guard<std::mutex> lock(mu_);
    return models_;
}

size_t ModelRegistry::size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return models_.size();
}

std::vector<ModelStatus> ModelRegistry::status() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<ModelStatus> out;
    for (const ModelSpec& s : loading_) out.push_back({s, "loading", 0, nullptr});
    // use_count counts the registry's own references: one in models_ /
    // retiring_ and one per name in by_name_.
    for (const ServedModelPtr& m : models_) {
        const auto own = static_cast<int64_t>(1 + m->spec.names().size());
        out.push_back({m->spec, "ready", m.use_count() - own, m});
    }
    for (const ServedModelPtr& m : retiring_) out.push_back({m->spec, "unloading", m.use_count() - 1, m});
    return out;
}

void ModelRegistry::reap_loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
        wake_.wait(lock, [this] { return stop_ || !retiring_.empty(); });
        if (stop_) return;  // what is left goes with the registry's members
        std::vector<ServedModelPtr> done;
        for (auto it = retiring_.begin(); it != retiring_.end();) {
            // Only the registry can copy it, so once unique it stays unique.
            if (it->use_count() == 1) {
                done.push_back(std::move(*it));
                it = retiring_.erase(it);
            } else {
                ++it;
            }
        }
        lock.unlock();
        done.clear();  // engines stop and weights unmap here, with no lock held
        lock.lock();
        if (!retiring_.empty()) wake_.wait_for(lock, std::chrono::milliseconds(50), [this] { return stop_; });
    }
}

}  // namespace tessera
