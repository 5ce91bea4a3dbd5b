#!/usr/bin/python3
"""gRPC's own client (Debian python3-grpcio) calls a gRPC service written on tern's routes
(tests/grpc/grpc_service.cpp, docs/grpc.md): a unary call and a server-streaming one, their
status read from the response's trailers (grpc-status, grpc-message), over h2c (an insecure
channel) and over TLS. The stubs are generated at test time from echo.proto with
grpc_tools.protoc (python3-grpc-tools) into a temporary folder.

    grpc_client.py PATH/TO/tern_grpc_service

Prints a line per check and ends with "N passed, M failed"; exits 1 when any failed, 77 when
python3-grpcio or python3-grpc-tools is not installed (scripts/install-deps.sh installs them).
"""
import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))
import procs  # noqa: E402  (tests/support/procs.py)
from certs import self_signed  # noqa: E402  (tests/support/certs.py)
from checks import check, finish  # noqa: E402  (tests/support/checks.py)

try:
    import grpc
    import grpc_tools.protoc  # noqa: F401  (only whether it is there)
except ImportError as e:
    print(f"SKIP gRPC's Python client or grpc_tools missing ({e}): "
          "apt install python3-grpcio python3-grpc-tools")
    sys.exit(77)

APP = sys.argv[1]


def stubs(work):
    """echo_pb2 and echo_pb2_grpc, generated into `work` from tests/grpc/echo.proto."""
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{HERE}",
                    f"--python_out={work}", f"--grpc_python_out={work}", str(HERE / "echo.proto")],
                   check=True)
    sys.path.insert(0, str(work))
    return importlib.import_module("echo_pb2"), importlib.import_module("echo_pb2_grpc")


def calls(channel, pb, rpc, how):
    """The calls of one channel; `how` names the transport in the checks."""
    echo = rpc.EchoStub(channel)
    reply, call = echo.Say.with_call(pb.Message(text="tern"), timeout=10)
    check(f"{how}: a unary call answers", reply.text == "hello, tern", reply)
    # gRPC keeps grpc-status and grpc-message to itself: a call without them fails. The
    # service's own trailer shows in the trailing metadata.
    check(f"{how}: its status OK and its trailing metadata come from the trailers",
          call.code() == grpc.StatusCode.OK and
          ("x-answered-by", "tern") in list(call.trailing_metadata()),
          (call.code(), call.trailing_metadata()))

    try:
        echo.Say(pb.Message(text=""), timeout=10)
        check(f"{how}: an error status reaches the client", False, "no error")
    except grpc.RpcError as e:
        check(f"{how}: an error status and message reach the client from the trailers",
              e.code() == grpc.StatusCode.INVALID_ARGUMENT and e.details() == "text is empty",
              (e.code(), e.details()))

    texts = [m.text for m in echo.Count(pb.Message(text="25"), timeout=10)]
    check(f"{how}: a server-streaming call gets every message in order",
          texts == [str(i) for i in range(1, 26)], texts)
    stream = echo.Count(pb.Message(text="3"), timeout=10)
    got = [m.text for m in stream]
    check(f"{how}: the stream ends with status OK and metadata from its trailers",
          got == ["1", "2", "3"] and stream.code() == grpc.StatusCode.OK and
          ("x-messages", "3") in list(stream.trailing_metadata()),
          (got, stream.code(), stream.trailing_metadata()))
    try:
        list(echo.Count(pb.Message(text="many"), timeout=10))
        check(f"{how}: a streaming call that fails at once gets its status", False, "no error")
    except grpc.RpcError as e:
        check(f"{how}: a streaming call that fails at once gets its status",
              e.code() == grpc.StatusCode.INVALID_ARGUMENT, (e.code(), e.details()))

    # Several calls at once on the one connection (HTTP/2 streams side by side).
    futures = [echo.Say.future(pb.Message(text=str(i)), timeout=10) for i in range(20)]
    answers = [f.result().text for f in futures]
    check(f"{how}: 20 concurrent unary calls all answer",
          answers == [f"hello, {i}" for i in range(20)], answers)


def main():
    with tempfile.TemporaryDirectory() as work:
        pb, rpc = stubs(Path(work))
        with procs.start([APP, "{port}"], name="grpc_service") as srv:
            with grpc.insecure_channel(f"127.0.0.1:{srv.port}") as channel:
                calls(channel, pb, rpc, "h2c")
            srv.stop()
        cert, key = self_signed(work)
        with procs.start([APP, "{port}", "--cert", cert, "--key", key],
                         name="grpc_service") as srv:
            credentials = grpc.ssl_channel_credentials(root_certificates=Path(cert).read_bytes())
            with grpc.secure_channel(f"localhost:{srv.port}", credentials) as channel:
                calls(channel, pb, rpc, "TLS")
            srv.stop()
    sys.exit(finish())


if __name__ == "__main__":
    main()
