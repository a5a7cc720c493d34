// A pretty-printed JSON document in which every value is an element labelled with its RFC 6901 JSON
// Pointer, so that an error's `path` can be shown in place.

/** Escapes one reference token of a JSON Pointer (RFC 6901: "~" → "~0", "/" → "~1"). */
export function escapeToken(token) {
  return String(token).replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The tokens of a JSON Pointer ("" is the whole document). */
export function pointerTokens(pointer) {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The pointer of the parent of `pointer` (the document is its own parent). */
export function parentPointer(pointer) {
  const at = pointer.lastIndexOf('/');
  return at <= 0 ? '' : pointer.slice(0, at);
}

/** The value a pointer names in a parsed document, or `undefined` when it names nothing. */
export function resolvePointer(document, pointer) {
  let value = document;
  for (const token of pointerTokens(pointer)) {
    if (Array.isArray(value)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= value.length) return undefined;
      value = value[Number(token)];
    } else if (value !== null && typeof value === 'object' && Object.hasOwn(value, token)) {
      value = value[token];
    } else {
      return undefined;
    }
  }
  return value;
}

function span(className, text) {
  const element = document.createElement('span');
  element.className = className;
  element.textContent = text;
  return element;
}

/**
 * Renders `value` into `container` as indented JSON and returns a map from each value's pointer to
 * its element. `base` is the pointer of `value` itself (to show part of a document); `limit` bounds
 * the number of values rendered, so that a very large document stays responsive.
 */
export function renderJson(container, value, { base = '', limit = Infinity } = {}) {
  const elements = new Map();
  let rendered = 0;
  let cut = false;

  const build = (node, pointer, indent) => {
    const element = document.createElement('span');
    element.className = 'j-value';
    element.dataset.pointer = pointer;
    elements.set(pointer, element);
    rendered += 1;
    if (rendered > limit) {
      cut = true;
      element.append(span('j-more', '…'));
      return element;
    }
    if (Array.isArray(node)) {
      if (node.length === 0) {
        element.append(span('j-punct', '[]'));
        return element;
      }
      element.append(span('j-punct', '['));
      node.forEach((item, index) => {
        element.append(`\n${indent}  `);
        element.append(build(item, `${pointer}/${index}`, `${indent}  `));
        if (index < node.length - 1) element.append(span('j-punct', ','));
      });
      element.append(`\n${indent}`, span('j-punct', ']'));
    } else if (node !== null && typeof node === 'object') {
      const keys = Object.keys(node);
      if (keys.length === 0) {
        element.append(span('j-punct', '{}'));
        return element;
      }
      element.append(span('j-punct', '{'));
      keys.forEach((key, index) => {
        element.append(`\n${indent}  `, span('j-key', JSON.stringify(key)), span('j-punct', ': '));
        element.append(build(node[key], `${pointer}/${escapeToken(key)}`, `${indent}  `));
        if (index < keys.length - 1) element.append(span('j-punct', ','));
      });
      element.append(`\n${indent}`, span('j-punct', '}'));
    } else {
      const kind = node === null ? 'null' : typeof node;
      element.classList.add(`j-${kind}`);
      element.textContent = JSON.stringify(node);
    }
    return element;
  };

  container.replaceChildren(build(value, base, ''));
  return { elements, cut };
}
