// QR images: the symbol comes from `qrcode`; PNG pixels are drawn here (so the size is exact and a
// logo is composited in the same buffer) and encoded with pngjs; SVG is qrcode's own output with
// the logo added as a data-URI <image>. Logos are decoded with pngjs or jpeg-js (pure JS).
import { invalid } from "../../lib/problem";

// The three libraries (CommonJS) are required on first use, synchronously: together they hold
// ≈ 10 MB of resident memory that a service which never draws or validates a code need not carry.
interface Imaging {
  QRCode: typeof import("qrcode");
  PNG: typeof import("pngjs").PNG;
  jpeg: typeof import("jpeg-js");
}
let loaded: Imaging | undefined;
function imaging(): Imaging {
  loaded ??= { QRCode: require("qrcode"), PNG: require("pngjs").PNG, jpeg: require("jpeg-js") };
  return loaded;
}

export type Ecc = "L" | "M" | "Q" | "H";

export interface ImageOptions {
  size: number;
  margin: number;
  dark: string; // RRGGBB
  light: string; // RRGGBB
  ecc: Ecc;
}

export interface Logo {
  content_type: "image/png" | "image/jpeg";
  data: Buffer;
}

interface Bitmap {
  width: number;
  height: number;
  data: Uint8Array; // RGBA
}

/** Largest logo dimension accepted; keeps decoded pixels (and memory) bounded. */
export const MAX_LOGO_SIDE = 4096;
/**
 * Side of the logo's light box relative to the symbol (margin excluded): 0.42² ≈ 18% of the area,
 * inside the ~20% that level H (30% of codewords recoverable) can afford to lose.
 */
const LOGO_BOX_RATIO = 0.42;
const MIN_LOGO_VERSION = 5;

/** Encodes `text` as a QR symbol; 400 naming `field` when it does not fit at that level. */
export function symbolOf(text: string, ecc: Ecc, withLogo = false, field = "ecc") {
  try {
    const symbol = imaging().QRCode.create(text, { errorCorrectionLevel: ecc });
    // In the smallest versions function patterns take most of the area, so a centred logo would
    // hide too many data modules: give a logo at least version MIN_LOGO_VERSION to sit on.
    if (withLogo && symbol.version < MIN_LOGO_VERSION) return imaging().QRCode.create(text, { errorCorrectionLevel: ecc, version: MIN_LOGO_VERSION });
    return symbol;
  } catch {
    throw invalid(field, `the text does not fit in a QR code at error-correction level ${ecc}`);
  }
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The image type by its magic bytes, or null when neither PNG nor JPEG. */
export function sniffImage(data: Buffer): Logo["content_type"] | null {
  if (data.length >= 8 && data.subarray(0, 8).equals(PNG_MAGIC)) return "image/png";
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return "image/jpeg";
  return null;
}

/** Decodes a logo to RGBA; throws (a plain Error) when it is corrupt or too large. */
export function decodeLogo(logo: Logo): Bitmap {
  if (logo.content_type === "image/png") {
    // IHDR width/height come right after the signature and chunk header: refuse huge images
    // before inflating them (a tiny file can decode to gigabytes).
    if (logo.data.length < 24) throw new Error("truncated PNG");
    const width = logo.data.readUInt32BE(16);
    const height = logo.data.readUInt32BE(20);
    if (width > MAX_LOGO_SIDE || height > MAX_LOGO_SIDE) throw new Error(`larger than ${MAX_LOGO_SIDE} px`);
    const png = imaging().PNG.sync.read(logo.data);
    return { width: png.width, height: png.height, data: png.data };
  }
  const img = imaging().jpeg.decode(logo.data, {
    useTArray: true,
    formatAsRGBA: true,
    maxResolutionInMP: (MAX_LOGO_SIDE * MAX_LOGO_SIDE) / 1_000_000,
    maxMemoryUsageInMB: 256,
  });
  if (img.width > MAX_LOGO_SIDE || img.height > MAX_LOGO_SIDE) throw new Error(`larger than ${MAX_LOGO_SIDE} px`);
  return { width: img.width, height: img.height, data: img.data };
}

const rgb = (hex: string): [number, number, number] => [
  parseInt(hex.slice(0, 2), 16),
  parseInt(hex.slice(2, 4), 16),
  parseInt(hex.slice(4, 6), 16),
];

/** The logo's box in image units: centred, LOGO_BOX_RATIO of the symbol's side. */
function logoBox(symbolSide: number, imageSide: number) {
  const side = symbolSide * LOGO_BOX_RATIO;
  return { x: (imageSide - side) / 2, side };
}

/** Fits w×h inside a square of `side`, keeping the aspect ratio. */
function fit(w: number, h: number, side: number, whole = true) {
  const k = Math.min(side / w, side / h);
  if (!whole) return { w: w * k, h: h * k };
  return { w: Math.max(1, Math.round(w * k)), h: Math.max(1, Math.round(h * k)) };
}

/** Area-averaged resampling (nearest when enlarging): good enough for a logo, and one pass. */
function resample(src: Bitmap, w: number, h: number): Uint8Array {
  const out = new Uint8Array(w * h * 4);
  for (let ty = 0; ty < h; ty++) {
    const y0 = Math.floor((ty * src.height) / h);
    const y1 = Math.max(y0 + 1, Math.floor(((ty + 1) * src.height) / h));
    for (let tx = 0; tx < w; tx++) {
      const x0 = Math.floor((tx * src.width) / w);
      const x1 = Math.max(x0 + 1, Math.floor(((tx + 1) * src.width) / w));
      let r = 0, g = 0, b = 0, a = 0;
      for (let y = y0; y < y1; y++) {
        let i = (y * src.width + x0) * 4;
        for (let x = x0; x < x1; x++, i += 4) {
          const alpha = src.data[i + 3];
          r += src.data[i] * alpha;
          g += src.data[i + 1] * alpha;
          b += src.data[i + 2] * alpha;
          a += alpha;
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const o = (ty * w + tx) * 4;
      if (a > 0) {
        out[o] = Math.round(r / a);
        out[o + 1] = Math.round(g / a);
        out[o + 2] = Math.round(b / a);
      }
      out[o + 3] = Math.round(a / n);
    }
  }
  return out;
}

export function renderPng(text: string, opts: ImageOptions, logo: Logo | null): Buffer {
  const symbol = symbolOf(text, logo ? "H" : opts.ecc, !!logo);
  const n = symbol.modules.size;
  const modules = symbol.modules.data;
  const total = n + 2 * opts.margin;
  const S = opts.size;
  const [dr, dg, db] = rgb(opts.dark);
  const [lr, lg, lb] = rgb(opts.light);
  const png = new (imaging().PNG)({ width: S, height: S, colorType: 2 });
  const px = png.data;
  // Module index of every pixel column/row (-1: in the margin).
  const moduleAt = new Int32Array(S);
  for (let i = 0; i < S; i++) {
    const m = Math.floor((i * total) / S) - opts.margin;
    moduleAt[i] = m >= 0 && m < n ? m : -1;
  }
  for (let y = 0; y < S; y++) {
    const row = moduleAt[y];
    let o = y * S * 4;
    for (let x = 0; x < S; x++, o += 4) {
      const col = moduleAt[x];
      const dark = row >= 0 && col >= 0 && modules[row * n + col] === 1;
      px[o] = dark ? dr : lr;
      px[o + 1] = dark ? dg : lg;
      px[o + 2] = dark ? db : lb;
      px[o + 3] = 255;
    }
  }
  if (logo) {
    const bitmap = decodeLogo(logo);
    const { x: bx, side } = logoBox((n * S) / total, S);
    const x0 = Math.round(bx);
    const boxSide = Math.round(side);
    for (let y = x0; y < x0 + boxSide; y++) {
      for (let x = x0, o = (y * S + x) * 4; x < x0 + boxSide; x++, o += 4) {
        px[o] = lr;
        px[o + 1] = lg;
        px[o + 2] = lb;
      }
    }
    // A quiet band of one module's width between the symbol and the logo.
    const pad = Math.ceil(S / total);
    const inner = Math.max(1, boxSide - 2 * pad);
    const { w, h } = fit(bitmap.width, bitmap.height, inner);
    const scaled = resample(bitmap, w, h);
    const ox = x0 + Math.floor((boxSide - w) / 2);
    const oy = x0 + Math.floor((boxSide - h) / 2);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const s = (y * w + x) * 4;
        const o = ((oy + y) * S + ox + x) * 4;
        const a = scaled[s + 3] / 255;
        px[o] = Math.round(scaled[s] * a + px[o] * (1 - a));
        px[o + 1] = Math.round(scaled[s + 1] * a + px[o + 1] * (1 - a));
        px[o + 2] = Math.round(scaled[s + 2] * a + px[o + 2] * (1 - a));
      }
    }
  }
  return imaging().PNG.sync.write(png, { colorType: 2 });
}

export async function renderSvg(text: string, opts: ImageOptions, logo: Logo | null): Promise<string> {
  const ecc = logo ? "H" : opts.ecc;
  const symbol = symbolOf(text, ecc, !!logo); // the same 400 as PNG when the text does not fit
  const svg = await imaging().QRCode.toString(text, {
    type: "svg",
    errorCorrectionLevel: ecc,
    version: symbol.version,
    margin: opts.margin,
    width: opts.size,
    color: { dark: `#${opts.dark}`, light: `#${opts.light}` },
  });
  if (!logo) return svg;
  const bitmap = decodeLogo(logo); // checks that the logo is drawable, and gives its aspect ratio
  const n = symbol.modules.size;
  const total = n + 2 * opts.margin;
  const { x, side } = logoBox(n, total);
  const pad = 1;
  const { w, h } = fit(bitmap.width, bitmap.height, side - 2 * pad, false);
  const href = `data:${logo.content_type};base64,${logo.data.toString("base64")}`;
  const f = (v: number) => Number(v.toFixed(3));
  const box = `<rect x="${f(x)}" y="${f(x)}" width="${f(side)}" height="${f(side)}" fill="#${opts.light}"/>`;
  const image = `<image x="${f(x + (side - w) / 2)}" y="${f(x + (side - h) / 2)}" width="${f(w)}" height="${f(h)}" preserveAspectRatio="xMidYMid meet" href="${href}"/>`;
  return svg.replace(/<\/svg>\s*$/, `${box}${image}</svg>`);
}
