// Small images for logo tests, made on the spot with the same libraries the module decodes with.
import jpeg from "jpeg-js";
import { PNG } from "pngjs";

function pattern(width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      data[o] = (x * 5) & 255;
      data[o + 1] = 40;
      data[o + 2] = (y * 7) & 255;
      data[o + 3] = 255;
    }
  }
  return data;
}

export function pngLogo(width = 160, height = 100): Buffer {
  const png = new PNG({ width, height });
  pattern(width, height).copy(png.data);
  return PNG.sync.write(png);
}

export function jpegLogo(width = 160, height = 100): Buffer {
  return Buffer.from(jpeg.encode({ width, height, data: pattern(width, height) }, 85).data);
}

export const b64 = (b: Buffer) => b.toString("base64");
