"""Images in: a file read as the providers take it (unchanged within their limits, scaled down
with pillow past them, a clear error for a corrupt or huge one), `read_file` on an image, `@path`
attaching one, each wire's shape, and a model without image input told in one line.

The end-to-end tests run `agent -p` through the real SDKs against the fake model server, which
records the images in each API's own shape (agent_cli/testing/fakeserver/images.py)."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse, block_from_json
from agent_cli.core.requests import Request
from agent_cli.providers import anthropic_wire, chat_wire, responses_wire
from agent_cli.providers.model_names import takes_images
from agent_cli.providers.models import lookup
from agent_cli.providers.sdk_client import without_images
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.testing.fakeserver.images import seen_images
from agent_cli.tools.base import ToolContext, ToolError
from agent_cli.tools.images import MAX_EDGE, MAX_IMAGE_BYTES, load_image
from agent_cli.tools.registry import default_tools


def picture(width: int = 320, height: int = 200, fmt: str = "PNG", *, noisy: bool = False) -> bytes:
    """An image file's bytes: a plain picture, or noise (which does not compress)."""
    if noisy:
        import os

        image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        image = Image.new("RGB", (width, height), (30, 120, 200))
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def huge_canvas(png: bytes) -> bytes:
    """`png` with its header claiming 60000 x 60000 pixels (its checksum made right, so a decoder
    believes it): a few hundred bytes that would need 10 GB decoded."""
    import zlib

    ihdr = b"IHDR" + (60000).to_bytes(4, "big") * 2 + png[24:29]
    return png[:12] + ihdr + zlib.crc32(ihdr).to_bytes(4, "big") + png[33:]


def _decoded(block: ImageBlock) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(block.data)))


# ---- reading an image file ---------------------------------------------------------------------


def test_an_image_within_the_limits_is_sent_unchanged_in_its_own_format() -> None:
    kinds = [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")]
    for fmt, media in kinds:
        data = picture(fmt=fmt)
        loaded = load_image(data, f"shot.{fmt.lower()}")
        assert base64.b64decode(loaded.block.data) == data  # byte for byte
        assert (loaded.block.media_type, loaded.block.width, loaded.block.height) == (media, 320, 200)
        assert not loaded.changed and "320x200 px" in loaded.line


def test_an_image_past_the_limits_is_scaled_down_to_fit() -> None:
    wide = load_image(picture(4000, 1000), "wide.png")
    assert (wide.block.width, wide.block.height) == (MAX_EDGE, 500)
    assert wide.block.media_type == "image/png" and wide.changed
    assert "4000x1000 px" in wide.line and "scaled down to 2000x500 px" in wide.line
    heavy = picture(1900, 1400, noisy=True)  # within the edge, past the bytes
    assert len(heavy) > MAX_IMAGE_BYTES
    loaded = load_image(heavy, "noise.png")
    assert len(base64.b64decode(loaded.block.data)) <= MAX_IMAGE_BYTES
    assert len(loaded.block.data) <= 5 * 1024 * 1024
    assert _decoded(loaded.block).size == (loaded.block.width, loaded.block.height)


def test_an_animated_gif_sends_its_first_frame() -> None:
    frames = [Image.new("RGB", (64, 64), c) for c in ((255, 0, 0), (0, 255, 0))]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:])
    loaded = load_image(out.getvalue(), "anim.gif")
    assert loaded.block.media_type == "image/png"
    assert _decoded(loaded.block).convert("RGB").getpixel((1, 1)) == (255, 0, 0)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (picture()[:200], "not a readable image"),  # truncated
        (b"\x89PNG\r\n\x1a\n" + b"garbage" * 50, "not a readable image"),
        (b"plain text", "not a PNG, JPEG, GIF or WebP"),
    ],
)
def test_a_corrupt_image_is_one_clear_error(data: bytes, said: str) -> None:
    with pytest.raises(ToolError) as caught:
        load_image(data, "bad.png")
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_huge_canvas_is_refused_before_it_is_decoded() -> None:
    # A PNG header claiming 60000 x 60000 pixels: refused by its size, nothing decoded.
    patched = huge_canvas(picture(40, 30))
    with pytest.raises(ToolError) as caught:
        load_image(patched, "bomb.png")
    assert "bomb.png is too large to read as an image" in str(caught.value)


def test_a_file_name_with_control_characters_is_written_out() -> None:
    loaded = load_image(picture(), "evil\x1b]52;c;aGk=\x07.png")
    assert "\x1b" not in loaded.block.name and "\x07" not in loaded.line and "\\x1b" in loaded.line
    with pytest.raises(ToolError) as caught:
        load_image(b"nope", "x\x1b[2J.png")
    assert "\x1b" not in str(caught.value)


# ---- read_file ---------------------------------------------------------------------------------


def test_read_file_returns_an_image_to_a_model_that_takes_images(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(picture())
    tools = default_tools()
    out = tools.run("read_file", {"path": "shot.png"}, ToolContext(root=tmp_path))
    assert not out.is_error and out.content.startswith("[image shot.png: PNG, 320x200 px")
    (image,) = out.images
    assert image.name == "shot.png" and base64.b64decode(image.data) == picture()


def test_read_file_tells_a_model_without_image_input_what_it_could_not_see(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(picture())
    (tmp_path / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\0" * 64)
    tools = default_tools()
    out = tools.run("read_file", {"path": "shot.png"}, ToolContext(root=tmp_path, images=False))
    assert out.is_error and not out.images
    assert "does not take images" in out.content and "320x200 px" in out.content
    broken = tools.run("read_file", {"path": "broken.jpg"}, ToolContext(root=tmp_path))
    assert broken.is_error and "not a readable image" in broken.content and "Traceback" not in broken.content


# ---- the model table and the wires -----------------------------------------------------------


def test_every_claude_and_gpt_model_in_the_table_takes_images() -> None:
    for name in ("claude-opus-5-5", "claude-haiku-4-5", "gpt-6.2-sol", "gpt-4o", "o3"):
        info = lookup(name)
        assert info is not None and info.accepts.images, name
    assert takes_images("claude-sonnet-7") and takes_images("openai/gpt-6.5-sol")
    assert not takes_images("llama-3.1-8b") and not takes_images("qwen2.5-coder")


def _conversation() -> tuple[Message, ...]:
    shot = load_image(picture(), "shot.png").block
    read = load_image(picture(64, 48), "read.png").block
    use = ToolUse("call_1", "read_file", {"path": "read.png"})
    return (
        Message("user", (TextBlock("what is wrong here?"), shot)),
        Message("assistant", (use,)),
        Message("user", (ToolResult("call_1", "[image read.png: PNG, 64x48 px, 1 KB]", images=(read,)),)),
    )


def test_each_wire_sends_images_in_its_own_shape() -> None:
    request = Request("sys", _conversation())
    anthropic = anthropic_wire.to_wire(request, "claude-opus-5-5", caching=False)
    first = anthropic["messages"][0]["content"]
    assert first[1]["type"] == "image" and first[1]["source"]["media_type"] == "image/png"
    result = anthropic["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and [b["type"] for b in result["content"]] == ["text", "image"]
    responses = responses_wire.to_wire(request, "gpt-6.2-sol")["input"]
    assert responses[0]["content"][1]["type"] == "input_image"
    assert responses[0]["content"][1]["image_url"].startswith("data:image/png;base64,")
    output = next(i for i in responses if i.get("type") == "function_call_output")["output"]
    assert [p["type"] for p in output] == ["input_text", "input_image"]
    chat = chat_wire.to_wire(request, "gpt-4o")["messages"]
    assert chat[1]["content"][1]["type"] == "image_url"
    tool, after = chat[-2], chat[-1]
    assert tool["role"] == "tool" and isinstance(tool["content"], str)
    assert after["role"] == "user" and after["content"][1]["type"] == "image_url"  # the tool's image follows


def test_a_model_without_image_input_is_sent_a_line_naming_each_image() -> None:
    request = without_images(Request("sys", _conversation()))
    assert not any(m.images for m in request.messages)
    texts = [b.text for b in request.messages[0].content if isinstance(b, TextBlock)]
    assert "[image shot.png (320x200 px) not shown: this model does not take images]" in texts
    result = request.messages[2].tool_results[0]
    assert "read.png (64x48 px) not shown" in result.content


def test_images_round_trip_through_json() -> None:
    for message in _conversation():
        again = Message.from_json(message.to_json())
        assert again.content == message.content
    shot = _conversation()[0].content[1]
    assert block_from_json(shot.to_json()) == shot  # type: ignore[union-attr]


# ---- end to end: `agent -p` through the real SDKs against the fake --------------------------

_WIRES = [
    ("anthropic", [], "anthropic"),
    ("openai", ["--wire", "responses", "--model", "gpt-6.2-sol"], "input_image"),
    ("openai", ["--wire", "chat", "--model", "gpt-4o"], "image_url"),
]


def _agent(tmp_path: Path, server: FakeModelServer, provider: str, prompt: str, *flags: str) -> Any:
    from tests.e2e import agent_env, run_agent

    home, project = tmp_path / "home", tmp_path / "proj"
    project.mkdir(exist_ok=True)
    (project / "shot.png").write_bytes(picture())
    (project / "big.png").write_bytes(picture(3000, 1500))
    args = ["-p", prompt, "--provider", provider, *flags]
    return run_agent(args, project, agent_env(home, server, provider))


@pytest.mark.e2e
@pytest.mark.parametrize(("provider", "flags", "shape"), _WIRES)
def test_at_path_attaches_the_image_itself(
    tmp_path: Path, provider: str, flags: list[str], shape: str
) -> None:
    with FakeModelServer() as server:
        server.queue(Reply("a blue rectangle"))
        done = _agent(tmp_path, server, provider, "what is in @shot.png and @big.png?", *flags)
        assert done.returncode == 0, done.stderr
        (request,) = server.requests
    seen = seen_images(request.body)
    assert [(s.shape, s.media_type, s.width, s.height) for s in seen] == [
        (shape, "image/png", 320, 200),
        (shape, "image/png", 2000, 1000),  # scaled down to the limits
    ]
    assert seen[0].size == len(picture())  # the small one byte for byte


@pytest.mark.e2e
@pytest.mark.parametrize(("provider", "flags", "shape"), _WIRES)
def test_read_file_on_an_image_reaches_the_model_as_an_image(
    tmp_path: Path, provider: str, flags: list[str], shape: str
) -> None:
    with FakeModelServer() as server:
        server.queue(Reply(tool_calls=[ToolCallSpec("read_file", {"path": "shot.png"})]), Reply("seen"))
        done = _agent(tmp_path, server, provider, "look at the screenshot", *flags)
        assert done.returncode == 0, done.stderr
        first, second = server.requests
    assert seen_images(first.body) == []
    ((kind, width, height),) = [(s.shape, s.width, s.height) for s in seen_images(second.body)]
    assert (kind, width, height) == (shape, 320, 200)


@pytest.mark.e2e
def test_a_model_without_image_input_gets_one_line_not_a_400(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.queue(Reply("no picture here"))
        flags = ["--wire", "chat", "--model", "local-llm"]
        done = _agent(tmp_path, server, "openai", "what is in @shot.png?", *flags)
        assert done.returncode == 0, done.stderr
        (request,) = server.requests
    assert seen_images(request.body) == []
    lines = [ln for ln in done.stderr.splitlines() if "shot.png" in ln]
    assert len(lines) == 1 and "does not take images" in lines[0] and "ask the user" not in lines[0]
