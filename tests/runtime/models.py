"""Tiny Hugging Face models (random weights, fp32) and one training step of each."""

import copy

import torch
import transformers

VOCAB = 128


def tiny_llama():
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64, attn_implementation="sdpa"))


def tiny_mixtral():
    return transformers.MixtralForCausalLM(transformers.MixtralConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=64,
        attn_implementation="sdpa"))


def tiny_gpt2():
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=64, attn_implementation="sdpa"))


MODELS = {"llama": tiny_llama, "mixtral": tiny_mixtral, "gpt2": tiny_gpt2}


def make_pair(name):
    torch.manual_seed(0)
    reference = MODELS[name]().train()
    for module in reference.modules():  # dropout would make eager and compiled differ by chance
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return reference, copy.deepcopy(reference)


def batch(seed=1, size=2, length=16):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (size, length), generator=generator)


def train_step(model, ids):
    model.zero_grad(set_to_none=True)
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    return loss.detach(), {name: p.grad.detach().clone() for name, p in model.named_parameters() if p.grad is not None}
