// A read-only memory-mapped file. Model weights are used in place from the
// mapping, so loading a model costs no copy and no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace tessera {

class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;

    static Expected<MappedFile> open(const std::string& path);

    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    const std::string& path() const { return path_; }

private:
    void release();
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
    std::string path_;
};

}  // namespace tessera
