/* torchair_ge op plugins: new IR ops (prototype + shape inference + CPU kernel) from a user's own
 * shared library, loaded at run time with torchair_ge.load_op_plugin(path).
 *
 * Plain C, no dependency on torch or on torchair_ge's C++ headers: build with
 *   cc -shared -fPIC -I"$(python -c 'import torchair_ge; print(torchair_ge.get_include())')" my_ops.c -o my_ops.so
 * The library exports one function, torchair_ge_op_plugin_init, which registers its ops through
 * the registrar it is handed. Every string and table is copied during registration.
 * docs/custom_ops.md walks through examples/op_plugin/soft_shrink.c. */
#ifndef TORCHAIR_GE_OP_PLUGIN_H_
#define TORCHAIR_GE_OP_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TGE_OP_PLUGIN_ABI_VERSION 1
#define TGE_MAX_RANK 8

/* Data types: the engine's numbering (GE's). */
enum {
  TGE_FLOAT = 0,
  TGE_FLOAT16 = 1,
  TGE_INT8 = 2,
  TGE_INT32 = 3,
  TGE_UINT8 = 4,
  TGE_INT16 = 6,
  TGE_UINT16 = 7,
  TGE_UINT32 = 8,
  TGE_INT64 = 9,
  TGE_UINT64 = 10,
  TGE_DOUBLE = 11,
  TGE_BOOL = 12,
  TGE_BFLOAT16 = 27
};

/* A tensor's type and shape (shape inference). */
typedef struct TgeTensorDesc {
  int32_t dtype;
  int32_t rank;
  int64_t shape[TGE_MAX_RANK];
} TgeTensorDesc;

/* A dense, contiguous tensor (kernels). `data` is NULL for an absent optional input. */
typedef struct TgeTensor {
  int32_t dtype;
  int32_t rank;
  const int64_t* shape;
  void* data;
} TgeTensor;

/* The node's attributes, read through TgeApi. */
typedef struct TgeAttrs TgeAttrs;

/* Services the engine hands to every callback. Getters return 0 when the attr exists and has
 * that type; list pointers stay valid for the duration of the callback. */
typedef struct TgeApi {
  int (*get_int)(const TgeAttrs* attrs, const char* name, int64_t* value);
  int (*get_float)(const TgeAttrs* attrs, const char* name, double* value);
  int (*get_bool)(const TgeAttrs* attrs, const char* name, int* value);
  int (*get_string)(const TgeAttrs* attrs, const char* name, const char** value);
  int (*get_ints)(const TgeAttrs* attrs, const char* name, const int64_t** values, int64_t* count);
  int (*get_floats)(const TgeAttrs* attrs, const char* name, const double** values, int64_t* count);
} TgeApi;

/* Sets outputs[0..num_outputs) from the inputs and attrs. Returns 0, or non-zero with a message
 * in `error` (NUL-terminated, at most error_size bytes), which the engine reports naming the node. */
typedef int (*TgeInferFn)(const TgeTensorDesc* inputs, int num_inputs, const TgeAttrs* attrs, const TgeApi* api,
                          TgeTensorDesc* outputs, int num_outputs, char* error, size_t error_size);

/* Computes the outputs (already allocated with the inferred descs) from the inputs. */
typedef int (*TgeComputeFn)(const TgeTensor* inputs, int num_inputs, TgeTensor* outputs, int num_outputs,
                            const TgeAttrs* attrs, const TgeApi* api, char* error, size_t error_size);

typedef struct TgeOpDef {
  const char* type;    /* IR op type, e.g. "SoftShrink" */
  const char* inputs;  /* comma-separated input names; a trailing '?' makes one optional: "x,bias?" */
  const char* outputs; /* comma-separated output names: "y" */
  const char* attrs;   /* comma-separated "name:type", type one of int, float, bool, string, list_int, list_float */
  const char* doc;     /* one line for op_proto() and the docs */
  TgeInferFn infer;
  TgeComputeFn compute;
} TgeOpDef;

typedef struct TgeRegistrar {
  int abi_version; /* TGE_OP_PLUGIN_ABI_VERSION of the engine */
  /* Registers one op; returns 0, or non-zero with the reason in the engine's error report. */
  int (*register_op)(const struct TgeRegistrar* registrar, const TgeOpDef* def);
  void* context; /* the engine's */
} TgeRegistrar;

/* The one symbol a plugin exports. Returns 0 on success. */
int torchair_ge_op_plugin_init(const TgeRegistrar* registrar);

#ifdef __cplusplus
}
#endif

#endif /* TORCHAIR_GE_OP_PLUGIN_H_ */
