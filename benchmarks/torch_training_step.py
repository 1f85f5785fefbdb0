"""The training step of bm_training_step in torch eager: the same model, math and inputs.

The transformer LM of examples/transformer_lm/model.cc written op for op in
torch (one-hot embedding products, layernorm, causal attention with a -1e9
mask, log-softmax as x - max - log(sum(exp)), ReLU MLP, tied output layer),
then one SGD step: torch.autograd.grad of the loss and new = p - lr * grad.
Parameters and tokens are the ones bm_training_step --dump-inputs=DIR wrote,
so the first loss must equal sharc's.

Usage: torch_training_step.py DIR SIZE THREADS [REPS]
Prints: torch SIZE THREADS <median ms> <first loss>
"""
import math
import statistics
import sys
import time

import numpy as np
import torch


def load(folder, size):
    params, tokens, config = {}, None, None
    with open(f"{folder}/manifest_{size}.txt") as manifest:
        for line in manifest:
            key, *rest = line.split()
            if key == "config":
                config = [int(v) for v in rest[:7]] + [float(rest[7])]
            elif key == "tokens":
                tokens = torch.from_numpy(np.load(f"{folder}/{rest[0]}").astype(np.int64))
            else:
                params[key] = torch.from_numpy(np.load(f"{folder}/{rest[0]}"))
    return config, params, tokens


def layer_norm(x, scale, bias):
    centred = x - x.mean(-1, keepdim=True)
    variance = (centred * centred).mean(-1, keepdim=True)
    return centred * torch.rsqrt(variance + 1e-5) * scale + bias


def log_softmax(x):
    shifted = x - x.max(-1, keepdim=True).values
    return shifted - torch.log(torch.exp(shifted).sum(-1, keepdim=True))


def one_hot(tokens, vocab):
    return torch.nn.functional.one_hot(tokens, vocab).to(torch.float32)


def loss_of(config, p, tokens):
    vocab, context, width, heads, _, layers = config[:6]
    b, t, hw = tokens.shape[0], context, width // heads
    inputs, targets = tokens[:, :t], tokens[:, 1:t + 1]
    h = torch.einsum("btv,vd->btd", one_hot(inputs, vocab), p[".embed"]) + p[".position"]
    causal = torch.arange(t)[:, None] >= torch.arange(t)[None, :]
    for i in range(layers):
        def w(name):
            return p[f".layers[{i}].{name}"]

        x = layer_norm(h, w("ln1_scale"), w("ln1_bias"))

        def split_heads(y):
            return y.reshape(b, t, heads, hw).permute(0, 2, 1, 3)

        q = split_heads(torch.einsum("btd,de->bte", x, w("query")))
        k = split_heads(torch.einsum("btd,de->bte", x, w("key")))
        v = split_heads(torch.einsum("btd,de->bte", x, w("value")))
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * (1.0 / math.sqrt(hw))
        scores = torch.where(causal, scores, torch.tensor(-1e9))
        weights = torch.exp(log_softmax(scores))
        context_ = torch.einsum("bhqk,bhkd->bhqd", weights, v)
        merged = context_.permute(0, 2, 1, 3).reshape(b, t, width)
        h = h + torch.einsum("btd,de->bte", merged, w("out"))
        x = layer_norm(h, w("ln2_scale"), w("ln2_bias"))
        hidden = torch.relu(torch.einsum("btd,dm->btm", x, w("mlp_in")) + w("mlp_in_bias"))
        h = h + torch.einsum("btm,md->btd", hidden, w("mlp_out")) + w("mlp_out_bias")
    h = layer_norm(h, p[".final_scale"], p[".final_bias"])
    log_probs = log_softmax(torch.einsum("btd,vd->btv", h, p[".embed"]))
    return -(log_probs * one_hot(targets, vocab)).sum(2).mean()


def main():
    folder, size, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    torch.set_num_threads(threads)
    config, params, tokens = load(folder, size)
    learning_rate = config[7]
    names = sorted(params)
    leaves = [params[n].clone().requires_grad_(True) for n in names]

    def step():
        loss = loss_of(config, dict(zip(names, leaves)), tokens)
        grads = torch.autograd.grad(loss, leaves)
        with torch.no_grad():
            updated = [p - learning_rate * g for p, g in zip(leaves, grads)]
        return loss.item(), updated

    first_loss, _ = step()  # warm-up: allocator and thread pool
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    print(f"torch {size} {threads} {statistics.median(times):.3f} {first_loss:.6f}")


if __name__ == "__main__":
    main()
