// Scans in the browser: PDFs rendered with pdf.js, images shown as they are displayed, each page with
// an overlay on which evidence boxes are drawn in normalized displayed-page coordinates.
import * as pdfjs from './vendor/pdfjs/pdf.min.mjs';

const vendor = new URL('./vendor/pdfjs/', import.meta.url);
pdfjs.GlobalWorkerOptions.workerSrc = new URL('pdf.worker.min.mjs', vendor).href;

/** Whether a file is a PDF, by type, name or its first bytes. */
async function isPdf(file) {
  if (file.type === 'application/pdf' || /\.pdf$/i.test(file.name)) return true;
  const head = new Uint8Array(await file.slice(0, 5).arrayBuffer());
  return String.fromCharCode(...head) === '%PDF-';
}

/**
 * Opens a chosen file: `{ file, kind: "pdf" | "image", pageCount }` plus what rendering needs.
 * Throws an Error naming the file when it cannot be read.
 */
export async function openScan(file) {
  if (await isPdf(file)) {
    const data = new Uint8Array(await file.arrayBuffer());
    try {
      const pdf = await pdfjs.getDocument({
        data,
        cMapUrl: new URL('cmaps/', vendor).href,
        cMapPacked: true,
        standardFontDataUrl: new URL('standard_fonts/', vendor).href,
        wasmUrl: new URL('wasm/', vendor).href,
        verbosity: pdfjs.VerbosityLevel.ERRORS,
      }).promise;
      return { file, kind: 'pdf', pageCount: pdf.numPages, pdf };
    } catch (error) {
      throw new Error(`${file.name} could not be read as a PDF: ${error.message}`);
    }
  }
  const url = URL.createObjectURL(file);
  const image = new Image();
  image.src = url;
  try {
    await image.decode();
  } catch {
    URL.revokeObjectURL(url);
    throw new Error(`${file.name} is neither a PDF nor an image this browser can show`);
  }
  return { file, kind: 'image', pageCount: 1, url };
}

/** Releases what `openScan` holds. */
export function closeScan(scan) {
  if (scan.kind === 'pdf') scan.pdf.destroy();
  else URL.revokeObjectURL(scan.url);
}

/**
 * Renders one page of a scan, `width` CSS pixels wide, as it is displayed: a PDF page with its
 * /Rotate applied (pdf.js viewports include the page rotation), an image in its display orientation
 * (browsers apply EXIF orientation to <img>). Returns `{ media, rotation }`: an element of the
 * displayed page's aspect ratio, and the PDF rotation in degrees.
 */
export async function renderPage(scan, pageNumber, width) {
  if (scan.kind === 'image') {
    const image = document.createElement('img');
    image.src = scan.url;
    image.alt = '';
    image.className = 'page-media';
    image.style.width = `${width}px`;
    await image.decode();
    return { media: image, rotation: 0 };
  }
  const page = await scan.pdf.getPage(pageNumber);
  const displayed = page.getViewport({ scale: 1 }); // rotation defaults to the page's /Rotate
  const scale = width / displayed.width;
  const ratio = window.devicePixelRatio || 1;
  const viewport = page.getViewport({ scale: scale * ratio });
  const canvas = document.createElement('canvas');
  canvas.className = 'page-media';
  canvas.width = Math.round(viewport.width);
  canvas.height = Math.round(viewport.height);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${Math.round(displayed.height * scale)}px`;
  canvas.setAttribute('aria-hidden', 'true');
  await page.render({ canvas, viewport }).promise;
  page.cleanup();
  return { media: canvas, rotation: page.rotate };
}

/**
 * Draws an evidence box on a page overlay. `box` is normalized to the displayed page (top-left
 * origin), so percentages of the overlay place it exactly, whatever the rendered size.
 */
export function drawBox(overlay, { box, label, outcome, detail }) {
  const element = document.createElement('div');
  // A label sits above its box, or inside it when the box touches the top of the page.
  element.className = `evidence-box ${outcome}${box.y < 0.04 ? ' label-inside' : ''}`;
  element.dataset.outcome = outcome;
  element.style.left = `${box.x * 100}%`;
  element.style.top = `${box.y * 100}%`;
  element.style.width = `${box.width * 100}%`;
  element.style.height = `${box.height * 100}%`;
  element.title = detail;
  const tag = document.createElement('span');
  tag.className = 'evidence-label';
  tag.textContent = label;
  element.append(tag);
  overlay.append(element);
  return element;
}
