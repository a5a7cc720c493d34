// Writes small PDFs for the browser test: pages of any size and /Rotate, with filled dark rectangles
// placed where given evidence boxes point on the page *as displayed*. A viewer that honours /Rotate
// shows each rectangle exactly under its box; one that ignores it does not.

/**
 * The rectangle in PDF user space (origin bottom-left, y up) that a box normalized to the displayed
 * page (origin top-left) covers, for a page of `width` × `height` points rotated by `rotate` degrees
 * clockwise when displayed (PDF /Rotate).
 */
export function userRect({ width, height, rotate = 0 }, box) {
  const { x, y, width: w, height: h } = box;
  switch (((rotate % 360) + 360) % 360) {
    case 0: // displayed = unrotated: (dx, dy) = (ux, H - uy)
      return [x * width, height - (y + h) * height, w * width, h * height];
    case 90: // displayed width H, height W: (dx, dy) = (uy, ux)
      return [y * width, x * height, h * width, w * height];
    case 180: // (dx, dy) = (W - ux, uy)
      return [width - (x + w) * width, y * height, w * width, h * height];
    case 270: // displayed width H, height W: (dx, dy) = (H - uy, W - ux)
      return [width - (y + h) * width, height - (x + w) * height, h * width, w * height];
    default:
      throw new Error(`rotation ${rotate} is not a multiple of 90`);
  }
}

/** A box shrunk towards its centre, keeping `keep` of its width and height. */
export function inset(box, keep = 0.6) {
  const dx = (box.width * (1 - keep)) / 2;
  const dy = (box.height * (1 - keep)) / 2;
  return { x: box.x + dx, y: box.y + dy, width: box.width * keep, height: box.height * keep };
}

/**
 * A PDF of the given pages: `[{ width, height, rotate, boxes: [{x, y, width, height}] }]`, each box
 * normalized to the displayed page and filled dark grey (inset, so the box's centre is dark).
 */
export function makePdf(pages) {
  const objects = [];
  const add = (body) => {
    objects.push(body);
    return objects.length;
  };
  const catalog = add(null);
  const tree = add(null);
  const kids = [];
  for (const page of pages) {
    const ops = ['0.15 g'];
    for (const box of page.boxes ?? []) {
      const [x, y, w, h] = userRect(page, inset(box));
      ops.push(`${x.toFixed(3)} ${y.toFixed(3)} ${w.toFixed(3)} ${h.toFixed(3)} re f`);
    }
    const stream = `${ops.join('\n')}\n`;
    const contents = add(`<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}endstream`);
    kids.push(add(
      `<< /Type /Page /Parent ${tree} 0 R /MediaBox [0 0 ${page.width} ${page.height}] ` +
        `/Rotate ${page.rotate ?? 0} /Resources << >> /Contents ${contents} 0 R >>`,
    ));
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${tree} 0 R >>`;
  objects[tree - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;

  let out = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
  const offsets = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
