/* An op plugin: a new IR op with its prototype, shape inference and CPU kernel, in plain C.
 *
 *   ScaledSoftShrink(x; lambd: float, scale: float) -> y
 *   y = scale * (x - lambd)  if x >  lambd
 *       scale * (x + lambd)  if x < -lambd
 *       0                    otherwise          (float32)
 *
 * Build:  cc -O2 -shared -fPIC -I"$(python -c 'import torchair_ge; print(torchair_ge.get_include())')" \
 *            soft_shrink.c -o libsoft_shrink.so
 * Use:    torchair_ge.load_op_plugin("libsoft_shrink.so"), then ge.ScaledSoftShrink(x, lambd=..., scale=...)
 *         in a converter (docs/custom_ops.md). `make test` builds it (CMake target
 *         ge_example_op_plugin) and tests/cpp/op_plugin_test.cc and tests/python/test_custom_ops.py use it. */
#include <stdio.h>

#include "torchair_ge/op_plugin.h"

static int infer(const TgeTensorDesc* inputs, int num_inputs, const TgeAttrs* attrs, const TgeApi* api,
                 TgeTensorDesc* outputs, int num_outputs, char* error, size_t error_size) {
  double lambd;
  if (inputs[0].dtype != TGE_FLOAT) {
    snprintf(error, error_size, "x must be float32, got dtype %d", (int)inputs[0].dtype);
    return 1;
  }
  if (api->get_float(attrs, "lambd", &lambd) != 0 || lambd < 0) {
    snprintf(error, error_size, "attr lambd must be a float >= 0");
    return 1;
  }
  outputs[0] = inputs[0]; /* same dtype and shape */
  return 0;
}

static int compute(const TgeTensor* inputs, int num_inputs, TgeTensor* outputs, int num_outputs, const TgeAttrs* attrs,
                   const TgeApi* api, char* error, size_t error_size) {
  double lambd = 0, scale = 1;
  api->get_float(attrs, "lambd", &lambd);
  api->get_float(attrs, "scale", &scale);
  int64_t n = 1;
  for (int d = 0; d < inputs[0].rank; ++d) n *= inputs[0].shape[d];
  const float* x = (const float*)inputs[0].data;
  float* y = (float*)outputs[0].data;
  const float l = (float)lambd, s = (float)scale;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > l ? s * (x[i] - l) : x[i] < -l ? s * (x[i] + l) : 0.0f;
  return 0;
}

int torchair_ge_op_plugin_init(const TgeRegistrar* registrar) {
  static const TgeOpDef def = {"ScaledSoftShrink",
                               "x",
                               "y",
                               "lambd:float,scale:float",
                               "scale * soft-shrink(x, lambd), float32",
                               infer,
                               compute};
  if (registrar->abi_version != TGE_OP_PLUGIN_ABI_VERSION) return 1;
  return registrar->register_op(registrar, &def);
}
