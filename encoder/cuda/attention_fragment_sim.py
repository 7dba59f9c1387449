#!/usr/bin/env python3
"""Lane-level model of FlashAttentionPipelinedKernel (encoder/ops/attention_pipelined_gpu.cu).

Replays, in numpy and for every lane of every warp, the kernel's own index
expressions (Q fragments, K fragments, masking, the quad max/sum reductions, the
C->A register reuse of P, the ldmatrix.x4.trans addresses for V, the output
stores) on top of the PTX ISA's documented fragment layouts for
mma.m16n8k16 (A row, B col, C) and ldmatrix .trans, and compares with plain
softmax attention. It checks that the kernel's indexing composes into the right
math without a GPU; it cannot check the hardware itself (cuda_kernels_test does
that on a GPU). Rerun after changing the kernel's fragment indexing:

    /usr/bin/python3 encoder/cuda/attention_fragment_sim.py

Seen on the development machine (2026-11-21): max abs error <= 7e-16 at lengths
1, 5, 64, 65 and 130 (two query blocks, a partial key tile, idle warps).
"""
import numpy as np
rng = np.random.default_rng(0)
D, BN, W, MT = 64, 64, 4, 2
RPW = 16 * MT; BM = W * RPW

def mma(d, a, b0, b1):
    # a: dict lane-> 4 regs (each pair of floats); reconstruct A (16x16), B (16x8) from all lanes
    A = np.zeros((16, 16)); B = np.zeros((16, 8))
    for lane in range(32):
        g, c = lane >> 2, lane & 3
        r = a[lane]
        A[g, 2*c:2*c+2] = r[0]; A[g+8, 2*c:2*c+2] = r[1]
        A[g, 2*c+8:2*c+10] = r[2]; A[g+8, 2*c+8:2*c+10] = r[3]
        B[2*c:2*c+2, g] = b0[lane]; B[2*c+8:2*c+10, g] = b1[lane]
    C = A @ B
    for lane in range(32):
        g, c = lane >> 2, lane & 3
        d[lane][0] += C[g, 2*c]; d[lane][1] += C[g, 2*c+1]
        d[lane][2] += C[g+8, 2*c]; d[lane][3] += C[g+8, 2*c+1]

def ldmatrix_x4_trans(addr_of_lane):
    # addr_of_lane(l) -> 8-element row (np array) ; matrix i rows from lanes 8i..8i+7
    mats = [np.stack([addr_of_lane(8*i + r) for r in range(8)]) for i in range(4)]
    out = {}
    for t in range(32):
        out[t] = [np.array([mats[i][2*(t%4), t//4], mats[i][2*(t%4)+1, t//4]]) for i in range(4)]
    return out

def kernel(q, k, v, scale):
    L = q.shape[0]
    out = np.full((L, D), np.nan)
    nt = (L + BN - 1) // BN
    for q0 in range(0, L, BM):
        for warp in range(W):
            qr = q0 + warp * RPW
            if qr >= L: continue
            lanes = range(32)
            qa = {}
            for lane in lanes:
                g, c = lane >> 2, lane & 3
                for mt in range(MT):
                    r0 = qr + mt*16 + g; r1 = r0 + 8
                    row = lambda r: q[r] if r < L else np.zeros(D)
                    for kk in range(4):
                        col = kk*16 + 2*c
                        qa[(lane, mt, kk)] = [row(r0)[col:col+2], row(r1)[col:col+2], row(r0)[col+8:col+10], row(r1)[col+8:col+10]]
            o = {(lane, mt): [np.zeros(4) for _ in range(8)] for lane in lanes for mt in range(MT)}
            m = {(lane, mt): [-np.inf, -np.inf] for lane in lanes for mt in range(MT)}
            l = {(lane, mt): [0.0, 0.0] for lane in lanes for mt in range(MT)}
            for tile in range(nt):
                k0 = tile * BN
                K = np.zeros((BN, D)); V = np.zeros((BN, D))
                n = min(BN, L - k0); K[:n] = k[k0:k0+n]; V[:n] = v[k0:k0+n]
                s = {(lane, mt): [np.zeros(4) for _ in range(8)] for lane in lanes for mt in range(MT)}
                for j in range(8):
                    for kk in range(4):
                        b0 = {lane: K[j*8 + (lane>>2), kk*16 + 2*(lane&3):kk*16+2*(lane&3)+2] for lane in lanes}
                        b1 = {lane: K[j*8 + (lane>>2), kk*16 + 8 + 2*(lane&3):kk*16+8+2*(lane&3)+2] for lane in lanes}
                        for mt in range(MT):
                            d = {lane: s[(lane, mt)][j] for lane in lanes}
                            mma(d, {lane: qa[(lane, mt, kk)] for lane in lanes}, b0, b1)
                partial = k0 + BN > L
                pa = {}
                for mt in range(MT):
                    mx = {}
                    for lane in lanes:
                        c = lane & 3
                        mx0, mx1 = m[(lane, mt)]
                        for j in range(8):
                            for e in range(4):
                                s[(lane, mt)][j][e] *= scale
                                if partial and k0 + j*8 + 2*c + (e & 1) >= L: s[(lane, mt)][j][e] = -np.inf
                            mx0 = max(mx0, s[(lane, mt)][j][0], s[(lane, mt)][j][1])
                            mx1 = max(mx1, s[(lane, mt)][j][2], s[(lane, mt)][j][3])
                        mx[lane] = [mx0, mx1]
                    # quad reduction via xor 1, 2
                    for sh in (1, 2):
                        mx = {lane: [max(mx[lane][0], mx[lane ^ sh][0]), max(mx[lane][1], mx[lane ^ sh][1])] for lane in lanes}
                    for lane in lanes:
                        mx0, mx1 = mx[lane]
                        a0 = 2.0 ** (m[(lane, mt)][0] - mx0); a1 = 2.0 ** (m[(lane, mt)][1] - mx1)
                        m[(lane, mt)] = [mx0, mx1]
                        S = s[(lane, mt)]; rs0 = rs1 = 0.0
                        for j in range(8):
                            S[j][0] = 2.0 ** (S[j][0] - mx0); S[j][1] = 2.0 ** (S[j][1] - mx0)
                            S[j][2] = 2.0 ** (S[j][2] - mx1); S[j][3] = 2.0 ** (S[j][3] - mx1)
                            rs0 += S[j][0] + S[j][1]; rs1 += S[j][2] + S[j][3]
                        l[(lane, mt)] = [l[(lane, mt)][0]*a0 + rs0, l[(lane, mt)][1]*a1 + rs1]
                        for j in range(8):
                            o[(lane, mt)][j][:2] *= a0; o[(lane, mt)][j][2:] *= a1
                        for kk in range(4):
                            pa[(lane, mt, kk)] = [S[2*kk][0:2], S[2*kk][2:4], S[2*kk+1][0:2], S[2*kk+1][2:4]]
                for kk in range(4):
                    for j in range(0, 8, 2):
                        def addr(lane):
                            mi = lane >> 3
                            key_in = (mi & 1)*8 + (lane & 7); dim_in = (mi >> 1)*8
                            return V[kk*16 + key_in, j*8 + dim_in: j*8 + dim_in + 8]
                        bv = ldmatrix_x4_trans(addr)
                        for mt in range(MT):
                            A = {lane: pa[(lane, mt, kk)] for lane in lanes}
                            d = {lane: o[(lane, mt)][j] for lane in lanes}
                            mma(d, A, {t: bv[t][0] for t in lanes}, {t: bv[t][1] for t in lanes})
                            d = {lane: o[(lane, mt)][j+1] for lane in lanes}
                            mma(d, A, {t: bv[t][2] for t in lanes}, {t: bv[t][3] for t in lanes})
            for mt in range(MT):
                ls = {lane: list(l[(lane, mt)]) for lane in lanes}
                for sh in (1, 2):
                    ls = {lane: [ls[lane][0] + ls[lane ^ sh][0], ls[lane][1] + ls[lane ^ sh][1]] for lane in lanes}
                for lane in lanes:
                    g, c = lane >> 2, lane & 3
                    r0 = qr + mt*16 + g; r1 = r0 + 8
                    for j in range(8):
                        col = j*8 + 2*c
                        if r0 < L: out[r0, col:col+2] = o[(lane, mt)][j][:2] / ls[lane][0]
                        if r1 < L: out[r1, col:col+2] = o[(lane, mt)][j][2:] / ls[lane][1]
    return out

for L in (1, 5, 64, 65, 130):
    q = rng.uniform(-3, 3, (L, D)); k = rng.uniform(-1, 1, (L, D)); v = rng.uniform(-1, 1, (L, D))
    sc = 0.125
    got = kernel(q, k, v, sc * 1.4426950408889634)
    S = q @ k.T * sc; P = np.exp(S - S.max(1, keepdims=True)); P /= P.sum(1, keepdims=True)
    want = P @ v
    print(L, 'max abs err', np.abs(got - want).max(), 'nan', np.isnan(got).any())
