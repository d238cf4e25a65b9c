// Files compiled into the binary (model presets, hardware database); see cmake/Embed.cmake.
#pragma once

#include <string_view>
#include <vector>

namespace dsplan {

struct EmbeddedFile {
  std::string_view name;  // file name without extension, e.g. "gpt2"
  std::string_view path;  // path relative to the embedded folder, e.g. "models/gpt2.json"
  std::string_view text;
};

}  // namespace dsplan
