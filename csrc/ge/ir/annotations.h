// Private node attributes ("_" prefix) that the frontend and the compile stages set for
// dumps, profiling and debugging. They never change what a node computes.
#pragma once

namespace ge {

inline constexpr const char* kAttrFxNode = "_fx_node";  // string: the FX node this IR node came from
inline constexpr const char* kAttrSource = "_source";   // string: the user's source line of that FX node
// strings per output: the output's shape with Dynamo's symbols ("[s0, 16]"; "" where static), in
// the engine instances of a graph with symbolic sizes (dumps show which dims are symbolic)
inline constexpr const char* kAttrSymbolicShapes = "_symbolic_shapes";
inline constexpr const char* kAttrEngine = "_engine";  // string: local / native / host_fallback (partition)
inline constexpr const char* kAttrStream = "_stream";  // int: stream the task runs on (memory stage)
// string: the stream label the user gave the node's FX node (torchair_ge.scope.npu_stream_switch);
// nodes with one label run on a stream of their own
inline constexpr const char* kAttrUserStream = "_user_stream_label";
// strings: the nodes of other streams this node waits for (their events) before it runs
inline constexpr const char* kAttrStreamWaits = "_stream_waits";
inline constexpr const char* kAttrFusedGroup = "_fused_group";  // int: fused kernel group, when fused
inline constexpr const char* kAttrMemOffsets = "_mem_offsets";  // ints per output; -1 when not in the arena
inline constexpr const char* kAttrMemSizes = "_mem_sizes";      // ints per output: bytes
inline constexpr const char* kAttrView = "_view";               // bool: output is a zero-copy view of input 0 (no task)
inline constexpr const char* kAttrInplaceInput = "_inplace_input";  // int: output written over this input's bytes
inline constexpr const char* kAttrWorkspaceOffsets =
    "_workspace_offsets";  // ints: arena offset of each kernel scratch tensor
inline constexpr const char* kAttrWorkspaceSizes = "_workspace_sizes";  // ints: their bytes
inline constexpr const char* kAttrPlacement = "_placement";  // strings per output: arena/input/output/constant

}  // namespace ge
