// Cross-field checks of a model (validate_model, model_json.cc) for the mixture-of-experts,
// latent-attention and gpt-oss block options: each appends one diagnostic per problem,
// naming the key and the values it allows. Internal to core/json.
#pragma once

#include <string>

#include "core/diagnostic.h"
#include "core/model_spec.h"

namespace dsplan::detail {

void check_moe_layers(Diagnostics& out, const std::string& file, const ModelSpec& m);
void check_moe_groups(Diagnostics& out, const std::string& file, const ModelSpec& m);
void check_mla(Diagnostics& out, const std::string& file, const ModelSpec& m);
// moe_bias needs experts; activation_clamp a gated MLP (it clamps the gate and the up
// projection); attention sinks and multi-head latent attention are not modelled together.
void check_block_options(Diagnostics& out, const std::string& file, const ModelSpec& m);

}  // namespace dsplan::detail
