"""A tiny llama-architecture GGUF model with random weights, written with the ``gguf`` package.

Four layers, a 512-wide residual stream and a SentencePiece-style vocabulary of control tokens, the
256 byte tokens and about a hundred word pieces: about 40 MiB that llama.cpp loads in well under a
second and that generates (meaningless) text at a few milliseconds a token on one core, so a
stream's chunks are apart in time. The weights come from a seeded generator, so every run writes
the same file.
"""

from __future__ import annotations

import pathlib
import string

import gguf
import numpy as np

MODEL_NAME = "tiny-llama"
FIRST_PIECE = 3 + 256  # after the control and byte tokens
CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _vocabulary() -> tuple[list[str], list[float], list[int]]:
    tokens = ["<unk>", "<s>", "</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{byte:02X}>" for byte in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    pieces = ["▁"] + [f"▁{c}" for c in string.ascii_lowercase] + list(string.ascii_lowercase)
    pieces += [f"▁{a}{b}" for a in "aeiost" for b in "nrtlsd"]
    tokens += pieces
    types += [gguf.TokenType.NORMAL] * len(pieces)
    scores = [0.0] * FIRST_PIECE + [-float(i) for i in range(len(pieces))]
    return tokens, scores, [int(t) for t in types]


def write_model(
    path: pathlib.Path, *, layers: int = 4, width: int = 512, heads: int = 8, seed: int = 7
) -> pathlib.Path:
    """Write the model to ``path`` (overwritten) and return it."""
    tokens, scores, types = _vocabulary()
    vocab, ff = len(tokens), 2 * width
    rng = np.random.default_rng(seed)

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(MODEL_NAME)
    writer.add_context_length(1024)
    writer.add_embedding_length(width)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(ff)
    writer.add_head_count(heads)
    writer.add_head_count_kv(heads)
    writer.add_rope_dimension_count(width // heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_chat_template(CHATML)

    writer.add_tensor("token_embd.weight", weight(vocab, width))
    writer.add_tensor("output_norm.weight", np.ones(width, dtype=np.float32))
    # the output layer only ever picks word pieces: their rows are large, those of the control and
    # byte tokens zero, so each generated token is whole text (no partial UTF-8 held back) and one
    # streamed chunk
    output = np.zeros((vocab, width), dtype=np.float32)
    output[FIRST_PIECE:] = rng.standard_normal((vocab - FIRST_PIECE, width)).astype(np.float32) * 5.0
    writer.add_tensor("output.weight", output)
    for i in range(layers):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(width, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"blk.{i}.{name}.weight", weight(width, width))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(width, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weight(ff, width))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weight(ff, width))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weight(width, ff))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


if __name__ == "__main__":  # python -m tests.engines.model PATH: the model README.md's example serves
    import sys

    print(write_model(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "model.gguf")))
