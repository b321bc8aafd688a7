// Error values for untrusted input. Code that parses files, requests or
// templates returns Status / Expected<T> instead of throwing or aborting, so a
// bad input becomes a message for the user and never a crash.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace tessera {

class Status {
public:
    Status() = default;
    static Status error(std::string message) { return Status(std::move(message)); }

    bool ok() const { return !failed_; }
    const std::string& message() const { return message_; }

private:
    explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
    bool failed_ = false;
    std::string message_;
};

inline Status ok_status() { return Status(); }

// Either a value or a failed Status. Accessing value() of an error aborts,
// because that is a bug in the caller, not bad input.
template <class T>
class Expected {
public:
    Expected(T value) : v_(std::move(value)) {}
    Expected(Status status) : v_(std::move(status)) {
        if (std::get<Status>(v_).ok()) {
            v_ = Status::error("internal error: Expected built from an ok Status");
        }
    }

    bool ok() const { return std::holds_alternative<T>(v_); }
    explicit operator bool() const { return ok(); }

    T& value() & { return checked(); }
    const T& value() const& { return const_cast<Expected*>(this)->checked(); }
    T&& value() && { return std::move(checked()); }
    T* operator->() { return &checked(); }
    const T* operator->() const { return &const_cast<Expected*>(this)->checked(); }
    T& operator*() { return checked(); }

    Status status() const { return ok() ? Status() : std::get<Status>(v_); }
    const std::string& error() const {
        static const std::string none;
        return ok() ? none : std::get<Status>(v_).message();
    }

private:
    T& checked() {
        if (!ok()) {
            std::fprintf(stderr, "fatal: value() of a failed Expected: %s\n",
                         std::get<Status>(v_).message().c_str());
            std::abort();
        }
        return std::get<T>(v_);
    }
    std::variant<T, Status> v_;
};

}  // namespace tessera

// Propagate a failed Status out of a function that returns Status or Expected<T>.
#define TS_RETURN_IF_ERROR(expr)                     \
    do {                                             \
        ::tessera::Status ts_status_ = (expr);       \
        if (!ts_status_.ok()) return ts_status_;     \
    } while (0)

// Assign the value of an Expected to `dst`, or return its failed Status.
#define TS_ASSIGN_OR_RETURN(dst, expr)           \
    do {                                         \
        auto ts_expected_ = (expr);              \
        if (!ts_expected_) return ts_expected_.status(); \
        dst = std::move(*ts_expected_);          \
    } while (0)
