"""torch eager: F.rms_norm, and for the fused op the sum then F.rms_norm."""

from ..matrix import EPS


def make(op):
    import torch.nn.functional as F

    if op == "rms_norm":
        return lambda x, w: F.rms_norm(x, (x.shape[-1],), w, EPS)

    def fused_add(x, r, w):
        s = x + r
        return F.rms_norm(s, (s.shape[-1],), w, EPS), s

    return fused_add
