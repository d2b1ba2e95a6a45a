#!/usr/bin/env python3
"""Writes resize_fixture.json beside this file: small deterministic RGB images resized with
torch's antialiased bicubic (float32) and with Pillow's Image.resize(BICUBIC) (the resize of the
Hugging Face image processors), for resize_test.ts. CI has no torch: the test reads only the JSON.

Run with a Python that has torch and Pillow (Debian: apt-get install python3-torch python3-pil,
then /usr/bin/python3 make_resize_fixture.py). The pixel formulas are repeated in resize_test.ts,
which checks that it rebuilds the same inputs.
"""

import base64
import json
import pathlib

import numpy as np
import PIL
import torch
import torch.nn.functional as F
from PIL import Image


def ramp(c, y, x):
    # Smooth ramps plus a high-frequency term (x xor y), so every tap weight matters.
    return (x * 73 + y * 151 + c * 89 + ((x ^ y) & 7) * 29) & 255


def checker(c, y, x):
    # Hard 0/255 edges: the cubic's negative lobes overshoot, so clamping is exercised.
    return ((x // 3 + y // 2 + c) % 2) * 255


FORMULAS = {"ramp": ramp, "checker": checker}

# (formula, input width, input height, output width, output height)
CASES = [
    ("ramp", 23, 17, 11, 29),  # shrink horizontally, enlarge vertically
    ("ramp", 40, 30, 28, 28),  # shrink both ways
    ("ramp", 7, 5, 56, 42),  # enlarge 8x
    ("checker", 30, 20, 13, 9),  # shrink hard edges
    ("checker", 9, 7, 25, 16),  # enlarge hard edges
    ("ramp", 64, 48, 56, 56),  # what Qwen2-VL's smart_resize does to a 64x48 image
]


def make(formula, w, h):
    f = FORMULAS[formula]
    return np.array(
        [[[f(c, y, x) for c in range(3)] for x in range(w)] for y in range(h)], dtype=np.uint8
    )


def b64(a):
    return base64.b64encode(np.ascontiguousarray(a, dtype=np.uint8).tobytes()).decode()


def main():
    cases = []
    for formula, w, h, ow, oh in CASES:
        img = make(formula, w, h)
        x = torch.from_numpy(img).permute(2, 0, 1).unsqueeze(0).float()
        y = F.interpolate(x, size=(oh, ow), mode="bicubic", antialias=True, align_corners=False)
        t = y.round().clamp(0, 255).to(torch.uint8)[0].permute(1, 2, 0).numpy()
        p = np.asarray(Image.fromarray(img, "RGB").resize((ow, oh), Image.BICUBIC))
        cases.append(
            {
                "formula": formula,
                "width": w,
                "height": h,
                "outWidth": ow,
                "outHeight": oh,
                "input": b64(img),
                "torch": b64(t),
                "pil": b64(p),
            }
        )
    out = {
        "about": "RGB uint8, rows top to bottom, base64; made by make_resize_fixture.py",
        "torch": torch.__version__,
        "pillow": PIL.__version__,
        "cases": cases,
    }
    path = pathlib.Path(__file__).with_name("resize_fixture.json")
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
