#!/usr/bin/env python3
"""Writes jpeg_fixture.json beside this file: small JPEGs that jpeg-js's encoder cannot make
(grayscale, progressive with 4:2:0 chroma, Adobe CMYK), encoded by Pillow (libjpeg), with the
RGB that Pillow's Image.open(...).convert("RGB") decodes from each, for codec_test.ts.

Run with a Python that has Pillow and numpy (Debian: apt-get install python3-pil python3-numpy,
then /usr/bin/python3 make_jpeg_fixture.py).
"""

import base64
import io
import json
import pathlib

import numpy as np
import PIL
from PIL import Image


def main():
    w, h = 32, 24
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack(
        [127.5 + 127.5 * np.sin(x / 5), 255 * y / (h - 1), 127.5 + 100 * np.cos((x + y) / 7)], -1
    ).round().astype(np.uint8)
    image = Image.fromarray(rgb, "RGB")
    variants = {
        "gray": (image.convert("L"), {"quality": 90}),
        "progressive420": (image, {"quality": 90, "progressive": True, "subsampling": 2}),
        "cmyk": (image.convert("CMYK"), {"quality": 90}),
    }
    cases = []
    for name, (im, options) in variants.items():
        buf = io.BytesIO()
        im.save(buf, "JPEG", **options)
        data = buf.getvalue()
        decoded = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        cases.append(
            {
                "name": name,
                "width": w,
                "height": h,
                "jpeg": base64.b64encode(data).decode(),
                "pilRgb": base64.b64encode(decoded.tobytes()).decode(),
            }
        )
    out = {"about": "made by make_jpeg_fixture.py", "pillow": PIL.__version__, "cases": cases}
    path = pathlib.Path(__file__).with_name("jpeg_fixture.json")
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
