// Error values for untrusted input. Code that parses files, requests or
// templates returns Status / Expected<T> instead of throwing or aborting, so a
// bad input becomes a message for the user and never a crash. Each error has
// a kind, so callers branch on what went wrong, never on the message text.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace tessera {

// What kind of failure a Status is; the server maps each to one HTTP status
// (server/api_error.cpp).
enum class ErrorKind {
    Ok,               // not an error
    InvalidArgument,  // the input is malformed or out of range (the default)
    NotFound,         // a named thing (model, file, route) does not exist
    LimitExceeded,    // the input is well-formed but over a configured limit
    Overloaded,       // too much work queued now; retrying later may succeed
    Unavailable,      // shutting down, still loading, or the model file changed
    Internal,         // a bug or an unexpected failure inside tessera
};

class Status {
public:
    Status() = default;
    static Status error(std::string message) { return Status(ErrorKind::InvalidArgument, std::move(message)); }
    static Status error(ErrorKind kind, std::string message) { return Status(kind, std::move(message)); }

    bool ok() const { return kind_ == ErrorKind::Ok; }
    ErrorKind kind() const { return kind_; }
    const std::string& message() const { return message_; }

private:
    // An error built with kind Ok is a caller bug; it stays an error (Internal).
    Status(ErrorKind kind, std::string message)
        : kind_(kind == ErrorKind::Ok ? ErrorKind::Internal : kind), message_(std::move(message)) {}
    ErrorKind kind_ = ErrorKind::Ok;
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
            v_ = Status::error(ErrorKind::Internal, "internal error: Expected built from an ok Status");
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
