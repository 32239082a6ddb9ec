"""The transformers architectures of the conformance suite: tiny configs, random seeded weights,
no downloads. One entry per architecture: how to build it, its inputs, what it exercises.

`quick` entries run in `make test`; all of them in `make test-full`. `generate` entries also run
greedy generation (tests/models/test_generate.py); `bf16` entries also run in bfloat16."""
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import transformers as tf

VOCAB = 1000


@dataclass(frozen=True)
class Architecture:
    name: str
    kind: str  # decoder | encoder | encoder-decoder | vision | speech
    features: str  # what the architecture exercises, for docs/models.md
    config: Callable[[], object]
    model_class: str  # transformers Auto class building the model from the config
    inputs: Callable[[], dict]
    quick: bool = False
    generate: bool = False
    bf16: bool = False
    tolerances: dict = field(default_factory=dict)

    def build(self, dtype=torch.float32):
        torch.manual_seed(0)
        model_class = getattr(tf, self.model_class)
        config = self.config()
        model = model_class.from_config(config) if self.model_class.startswith("Auto") else model_class(config)
        return model.to(dtype).eval()


def _ids(batch=2, seq=16, vocab=VOCAB):
    return torch.randint(1, vocab, (batch, seq), generator=torch.Generator().manual_seed(1))


def _text(padded=True):
    """Two sequences, the second one right-padded by 4 tokens (an arbitrary attention mask)."""
    ids = _ids()
    mask = torch.ones_like(ids)
    if padded:
        mask[1, -4:] = 0
    return {"input_ids": ids, "attention_mask": mask}


def _seq2seq():
    return {**_text(), "decoder_input_ids": _ids(seq=8)}


def _pixels(size=32, channels=3):
    return {"pixel_values": torch.randn(2, channels, size, size, generator=torch.Generator().manual_seed(2))}


def _audio(samples=4000):
    return {"input_values": torch.randn(2, samples, generator=torch.Generator().manual_seed(3))}


_LLM = dict(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
            vocab_size=VOCAB, max_position_embeddings=256, bos_token_id=0, eos_token_id=0, pad_token_id=0)
_ENCODER = dict(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, vocab_size=VOCAB,
                max_position_embeddings=128)


def _llm(config_class, **overrides):
    return lambda: getattr(tf, config_class)(**{**_LLM, **overrides})


def _encoder(config_class, **overrides):
    return lambda: getattr(tf, config_class)(**{**_ENCODER, **overrides})


def _config(config_class, **kwargs):
    return lambda: getattr(tf, config_class)(**kwargs)


def _decoder(name, config, features, **options):
    return Architecture(name, "decoder", features, config, "AutoModelForCausalLM", _text,
                        generate=True, bf16=True, **options)


_MOE = dict(num_local_experts=4, num_experts_per_tok=2)

ARCHITECTURES = [
    # Decoder LLMs
    _decoder("llama", _llm("LlamaConfig"), "GQA, RoPE, RMSNorm, SwiGLU", quick=True),
    _decoder("mistral", _llm("MistralConfig", sliding_window=8), "GQA, sliding-window attention"),
    _decoder("qwen2", _llm("Qwen2Config"), "GQA, QKV bias"),
    _decoder("qwen3", _llm("Qwen3Config", head_dim=16), "GQA, QK RMSNorm"),
    _decoder("gemma", _llm("GemmaConfig", head_dim=16), "GQA, GeGLU, scaled embeddings, (1+w) RMSNorm"),
    _decoder("gemma2", _llm("Gemma2Config", head_dim=16, sliding_window=8, query_pre_attn_scalar=16),
             "logit soft-capping (attention and final), alternating sliding windows, sandwich norms", quick=True),
    _decoder("gemma3", _llm("Gemma3TextConfig", head_dim=16, sliding_window=8, query_pre_attn_scalar=16),
             "QK norm, local/global RoPE bases, sliding windows"),
    _decoder("phi", _llm("PhiConfig", num_key_value_heads=4, partial_rotary_factor=0.5),
             "parallel attention/MLP, partial rotary, LayerNorm"),
    _decoder("phi3", _llm("Phi3Config"), "fused QKV and gate-up projections"),
    _decoder("mixtral", _llm("MixtralConfig", **_MOE), "MoE routing (top-2 of 4 experts)", quick=True),
    _decoder("qwen2_moe", _llm("Qwen2MoeConfig", num_experts=4, num_experts_per_tok=2, moe_intermediate_size=64,
                               shared_expert_intermediate_size=64), "MoE with a gated shared expert"),
    _decoder("qwen3_moe", _llm("Qwen3MoeConfig", head_dim=16, num_experts=4, num_experts_per_tok=2,
                               moe_intermediate_size=64), "MoE, QK norm"),
    _decoder("olmo", _llm("OlmoConfig"), "non-parametric LayerNorm"),
    _decoder("olmo2", _llm("Olmo2Config"), "post-norms, QK norm"),
    _decoder("falcon", _config("FalconConfig", num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                               vocab_size=VOCAB, new_decoder_architecture=False, multi_query=True,
                               parallel_attn=True, bos_token_id=0, eos_token_id=0),
             "multi-query attention, parallel attention/MLP"),
    _decoder("bloom", _config("BloomConfig", n_layer=2, hidden_size=64, n_head=4, vocab_size=VOCAB,
                              bos_token_id=0, eos_token_id=0, pad_token_id=0), "ALiBi, embedding LayerNorm"),
    _decoder("mpt", _config("MptConfig", n_layers=2, d_model=64, n_heads=4, vocab_size=VOCAB, max_seq_len=256,
                            expansion_ratio=2), "ALiBi, no biases"),
    _decoder("gpt_neox", _config("GPTNeoXConfig", num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                                 intermediate_size=128, vocab_size=VOCAB, rotary_pct=0.25,
                                 use_parallel_residual=True, bos_token_id=0, eos_token_id=0),
             "parallel residual, partial rotary"),
    _decoder("gptj", _config("GPTJConfig", n_layer=2, n_embd=64, n_head=4, rotary_dim=8, vocab_size=VOCAB,
                             n_positions=256, bos_token_id=0, eos_token_id=0), "interleaved rotary, parallel block"),
    _decoder("opt", _config("OPTConfig", num_hidden_layers=2, hidden_size=64, ffn_dim=128, num_attention_heads=4,
                            vocab_size=VOCAB, max_position_embeddings=256, word_embed_proj_dim=64,
                            bos_token_id=0, eos_token_id=0, pad_token_id=1), "learned positions, tied embeddings"),
    _decoder("gpt2", _config("GPT2Config", n_layer=2, n_embd=64, n_head=4, vocab_size=VOCAB, n_positions=256,
                             bos_token_id=0, eos_token_id=0), "Conv1D projections, tied embeddings", quick=True),
    _decoder("gpt_bigcode", _config("GPTBigCodeConfig", n_layer=2, n_embd=64, n_head=4, vocab_size=VOCAB,
                                    n_positions=256, multi_query=True, bos_token_id=0, eos_token_id=0),
             "multi-query attention"),
    _decoder("codegen", _config("CodeGenConfig", n_layer=2, n_embd=64, n_head=4, rotary_dim=8, vocab_size=VOCAB,
                                n_positions=256, n_ctx=256, bos_token_id=0, eos_token_id=0),
             "mp_num-split fused QKV, parallel block"),
    _decoder("stablelm", _llm("StableLmConfig", partial_rotary_factor=0.25), "partial rotary, LayerNorm"),
    _decoder("starcoder2", _llm("Starcoder2Config", sliding_window=8), "sliding window, GELU MLP with biases"),
    _decoder("cohere", _llm("CohereConfig", logit_scale=0.5), "parallel block, interleaved rotary, logit scale"),
    _decoder("granite", _llm("GraniteConfig", embedding_multiplier=2.0, residual_multiplier=0.5,
                             attention_multiplier=0.25, logits_scaling=2.0), "scaled residuals and logits"),
    _decoder("smollm3", _llm("SmolLM3Config"), "RoPE on some layers only (NoPE)"),
    # Encoders
    Architecture("bert", "encoder", "post-LN, learned positions, token types", _encoder("BertConfig"), "AutoModel",
                 _text, quick=True),
    Architecture("roberta", "encoder", "padding-offset positions", _encoder("RobertaConfig", pad_token_id=1),
                 "AutoModel", _text),
    Architecture("distilbert", "encoder", "no token types", _config("DistilBertConfig", n_layers=2, dim=64,
                 hidden_dim=128, n_heads=4, vocab_size=VOCAB), "AutoModel", _text),
    Architecture("albert", "encoder", "factorized embeddings, shared layers",
                 _encoder("AlbertConfig", embedding_size=32), "AutoModel", _text),
    Architecture("electra", "encoder", "embedding projection", _encoder("ElectraConfig", embedding_size=32),
                 "AutoModel", _text),
    Architecture("deberta_v2", "encoder", "disentangled relative attention",
                 _encoder("DebertaV2Config", relative_attention=True, position_buckets=16, max_relative_positions=32,
                          pos_att_type=["p2c", "c2p"]), "AutoModel", _text),
    Architecture("mpnet", "encoder", "relative position bias", _encoder("MPNetConfig"), "AutoModel", _text),
    Architecture("modernbert", "encoder", "RoPE, GeGLU, alternating local/global attention",
                 _config("ModernBertConfig", num_hidden_layers=2, hidden_size=64, intermediate_size=128,
                         num_attention_heads=4, vocab_size=VOCAB, local_attention=8, pad_token_id=0),
                 "AutoModel", _text),
    # Encoder-decoders
    Architecture("t5", "encoder-decoder", "relative position buckets, RMSNorm, no biases",
                 _config("T5Config", num_layers=2, d_model=64, d_ff=128, num_heads=4, d_kv=16, vocab_size=VOCAB,
                         decoder_start_token_id=0, pad_token_id=0, eos_token_id=1),
                 "AutoModelForSeq2SeqLM", _seq2seq, quick=True, generate=True),
    Architecture("bart", "encoder-decoder", "learned positions, cross-attention",
                 _config("BartConfig", encoder_layers=2, decoder_layers=2, d_model=64, encoder_ffn_dim=128,
                         decoder_ffn_dim=128, encoder_attention_heads=4, decoder_attention_heads=4,
                         vocab_size=VOCAB, max_position_embeddings=256),
                 "AutoModelForSeq2SeqLM", _seq2seq, generate=True),
    Architecture("marian", "encoder-decoder", "sinusoidal positions",
                 _config("MarianConfig", encoder_layers=2, decoder_layers=2, d_model=64, encoder_ffn_dim=128,
                         decoder_ffn_dim=128, encoder_attention_heads=4, decoder_attention_heads=4,
                         vocab_size=VOCAB, max_position_embeddings=256, pad_token_id=0, decoder_start_token_id=0),
                 "AutoModelForSeq2SeqLM", _seq2seq),
    # Vision
    Architecture("vit", "vision", "patch embeddings, CLS pooling",
                 _config("ViTConfig", image_size=32, patch_size=8, num_hidden_layers=2, hidden_size=64,
                         intermediate_size=128, num_attention_heads=4, num_labels=10),
                 "AutoModelForImageClassification", _pixels, quick=True),
    Architecture("deit", "vision", "distillation token",
                 _config("DeiTConfig", image_size=32, patch_size=8, num_hidden_layers=2, hidden_size=64,
                         intermediate_size=128, num_attention_heads=4, num_labels=10),
                 "DeiTForImageClassification", _pixels),
    Architecture("beit", "vision", "relative position bias, layer scale, mean pooling",
                 _config("BeitConfig", image_size=32, patch_size=8, num_hidden_layers=2, hidden_size=64,
                         intermediate_size=128, num_attention_heads=4, num_labels=10,
                         use_relative_position_bias=True), "AutoModelForImageClassification", _pixels),
    Architecture("dinov2", "vision", "interpolated position embeddings, layer scale",
                 _config("Dinov2Config", image_size=32, patch_size=8, num_hidden_layers=2, hidden_size=64,
                         num_attention_heads=4, num_labels=10), "AutoModelForImageClassification", _pixels),
    Architecture("swin", "vision", "windowed attention, shifted windows, patch merging",
                 _config("SwinConfig", image_size=32, patch_size=2, embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                         window_size=4, num_labels=10), "AutoModelForImageClassification", _pixels, quick=True),
    Architecture("convnext", "vision", "depthwise 7x7 convs, channels-last LayerNorm",
                 _config("ConvNextConfig", num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10),
                 "AutoModelForImageClassification", _pixels),
    Architecture("resnet", "vision", "bottleneck blocks, batch norm, pooling head",
                 _config("ResNetConfig", embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10),
                 "AutoModelForImageClassification", _pixels),
    Architecture("mobilenet_v2", "vision", "depthwise separable convs, ReLU6",
                 _config("MobileNetV2Config", image_size=32, depth_multiplier=0.35, num_labels=10),
                 "AutoModelForImageClassification", _pixels),
    Architecture("regnet", "vision", "grouped convs, squeeze-excitation",
                 _config("RegNetConfig", embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8,
                         num_labels=10), "AutoModelForImageClassification", _pixels),
    # Speech
    Architecture("wav2vec2", "speech", "conv feature encoder, positional conv, group norm",
                 _config("Wav2Vec2Config", num_hidden_layers=2, hidden_size=64, intermediate_size=128,
                         num_attention_heads=4, conv_dim=(32, 32, 32), conv_stride=(5, 4, 2),
                         conv_kernel=(10, 4, 2), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4),
                 "AutoModel", _audio, quick=True),
    Architecture("hubert", "speech", "conv feature encoder, positional conv",
                 _config("HubertConfig", num_hidden_layers=2, hidden_size=64, intermediate_size=128,
                         num_attention_heads=4, conv_dim=(32, 32, 32), conv_stride=(5, 4, 2),
                         conv_kernel=(10, 4, 2), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4),
                 "AutoModel", _audio),
    Architecture("whisper_encoder", "speech", "conv front end, sinusoidal positions",
                 _config("WhisperConfig", encoder_layers=2, decoder_layers=2, d_model=64, encoder_ffn_dim=128,
                         decoder_ffn_dim=128, encoder_attention_heads=4, decoder_attention_heads=4,
                         num_mel_bins=16, max_source_positions=32, vocab_size=VOCAB),
                 "WhisperForAudioClassification",
                 lambda: {"input_features": torch.randn(2, 16, 64, generator=torch.Generator().manual_seed(4))}),
]
