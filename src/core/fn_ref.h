// A non-owning reference to a callable, for calls that use it only while
// they run (ThreadPool::run, parallel_for). std::function copies its target
// and allocates once the captures pass 16 bytes, which made every decode
// step allocate once per layer; a FnRef never allocates.
#pragma once

#include <type_traits>
#include <utility>

namespace tessera {

template <class Sig>
class FnRef;

template <class R, class... Args>
class FnRef<R(Args...)> {
public:
    // Refers to f, which must outlive every call through this FnRef (a
    // temporary lambda passed straight to a function lives until it returns).
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FnRef> &&
                                                std::is_invocable_r_v<R, const F&, Args...>>>
    FnRef(const F& f)  // NOLINT(google-explicit-constructor): converts like std::function
        : obj_(&f), call_([](const void* obj, Args... args) -> R {
              return (*static_cast<const F*>(obj))(std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

private:
    const void* obj_;
    R (*call_)(const void*, Args...);
};

}  // namespace tessera
