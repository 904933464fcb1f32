"""A shipped result is reproduced exactly only by a machine whose CPU kernels round as the shipped
run's did: long training runs on the small models amplify a difference in the last bit of a sum.

Measured on a 2-core machine with AVX-512 and AMX (torch 2.13.0, one thread), the noisy-reward
experiment's seed-0 SFT model scored 0.442 held-out greedy accuracy with the default kernels, and
0.434, 0.352, 0.380 and 0.224 with MKL told to take other code paths (MKL_CBWR=AVX2, AVX2,STRICT,
COMPATIBLE, AVX512,STRICT), against the shipped 0.372, which the machines the shipped runs and CI ran
on reproduce exactly: rounding alone moves this SFT model as far as a change of seed does (the shipped
seeds score 0.372, 0.358, 0.836), and nothing downstream of it can be compared.

`kernel_fingerprint()` names a machine's rounding with torch alone (none of the package's code): a hash
of one forward and backward pass of matrix products, softmax, layer norm and GELU at the lab model's
sizes. OTHER_ROUNDING holds the fingerprints of machines measured to round differently from the
shipped runs' machine; on one of them the reproduction tests skip and say why. Everywhere else they
compare exactly, as before: a change of code that moves the SFT model still fails them.
"""

import hashlib

import pytest

OTHER_ROUNDING = {
    "6bc0d0da9ba5d912": "2 cores with AVX-512 and AMX, one torch thread: SFT seed 0 scores 0.442, not 0.372",
}


def kernel_fingerprint():
    import torch

    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 32, 64, generator=g)
    ws = [torch.randn(i, o, generator=g, requires_grad=True) for i, o in ((64, 192), (64, 256), (256, 64), (64, 17))]
    h = torch.nn.functional.layer_norm(x, (64,))
    q, k, v = (h @ ws[0] / 8).split(64, -1)
    a = torch.softmax(q @ k.transpose(1, 2) / 8, -1) @ v + x
    m = torch.nn.functional.gelu(torch.nn.functional.layer_norm(a, (64,)) @ ws[1]) @ ws[2] / 16 + a
    loss = torch.log_softmax(m @ ws[3], -1)[..., 0].mean()
    loss.backward()
    digest = hashlib.sha256()
    for t in (loss.detach(), *(w.grad for w in ws)):
        digest.update(t.numpy().tobytes())
    return digest.hexdigest()[:16]


def skip_where_rounding_differs(experiment):
    """Skip on a machine measured to round differently from the one `experiment`'s shipped run came from."""
    fingerprint = kernel_fingerprint()
    if fingerprint in OTHER_ROUNDING:
        pytest.skip(f"this machine's CPU kernels (fingerprint {fingerprint}: {OTHER_ROUNDING[fingerprint]}) round "
                    f"differently from those of the machine {experiment}'s shipped run came from, so its numbers "
                    "cannot be reproduced here (tests/_rounding.py)")
