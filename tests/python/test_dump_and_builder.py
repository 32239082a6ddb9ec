"""The ge.* builder API driving a Session directly (graph dumps: test_debug_dump.py)."""
import torch

from torchair_ge import _C, ge
from torchair_ge.engine import default_session, next_graph_id


def test_builder_api_runs_through_a_session():
    builder = ge.GraphBuilder("handmade")
    with ge.graph_context(builder):
        x = builder.create_input(0, ge.DataType.DT_FLOAT, [2, 3])
        w = ge.Const(torch.arange(6.0).reshape(3, 2))
        y = ge.MatMulV2(x, w, ge.Const([0.5, -0.5]))
        z = ge.Cast(ge.Relu(y), torch.float16)
        assert z.dtype == ge.DataType.DT_FLOAT16 and z.shape == [2, 2]
        builder.set_outputs([z, ge.op("Neg", x)])
    graph = builder.build()
    assert graph.node_types()[-1] == "NetOutput"
    session, gid = default_session(), next_graph_id()
    session.add_graph(gid, graph)
    session.compile_graph(gid)
    xin = torch.randn(2, 3)
    z_out, neg = session.run_graph(gid, [xin])
    torch.testing.assert_close(z_out, torch.relu(xin @ torch.arange(6.0).reshape(3, 2) + torch.tensor([0.5, -0.5])).half())
    torch.testing.assert_close(neg, -xin)
    summary = session.summary(gid)
    # Data, two Consts, NetOutput are local; MatMulV2 + Relu + Cast run as one fused task, Neg as another.
    assert summary["task_num"] == 2 and summary["engines"]["local"] == 4 and summary["autofuse"]["kernels"] == 1
    session.remove_graph(gid)


def test_builder_errors_name_the_op():
    builder = ge.GraphBuilder()
    with ge.graph_context(builder):
        x = builder.create_input(0, ge.DataType.DT_FLOAT, [2, 3])
        try:
            ge.Add(x, builder.create_input(1, ge.DataType.DT_FLOAT, [4]))
        except _C.GeError as e:
            assert "Add" in str(e) and "[2,3] and [4] do not broadcast" in str(e)
        else:
            raise AssertionError("expected a GeError")


def test_op_functions_carry_the_prototype_docs():
    assert "transpose_x1: bool = False" in ge.MatMulV2.__doc__
    assert set(["Add", "Conv2D", "LayerNorm"]) <= set(_C.op_types())
