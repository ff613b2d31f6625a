// JSON.parse that keeps integers beyond 2^53 exact (as BigInt). Node 20's JSON.parse has no
// access to the source text of numbers, and Iceberg snapshot ids / int64 values need it.
export function parseJsonLossless(text) {
  let i = 0
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++ }
  const err = msg => { throw new SyntaxError(`${msg} at offset ${i}`) }
  const value = () => {
    ws()
    const c = text[i]
    if (c === '{') {
      i++
      const o = {}
      ws()
      if (text[i] === '}') { i++; return o }
      for (;;) {
        ws()
        if (text[i] !== '"') err('expected string key')
        const k = str()
        ws()
        if (text[i++] !== ':') err('expected :')
        o[k] = value()
        ws()
        if (text[i] === ',') { i++; continue }
        if (text[i] === '}') { i++; return o }
        err('expected , or }')
      }
    }
    if (c === '[') {
      i++
      const a = []
      ws()
      if (text[i] === ']') { i++; return a }
      for (;;) {
        a.push(value())
        ws()
        if (text[i] === ',') { i++; continue }
        if (text[i] === ']') { i++; return a }
        err('expected , or ]')
      }
    }
    if (c === '"') return str()
    if (text.startsWith('true', i)) { i += 4; return true }
    if (text.startsWith('false', i)) { i += 5; return false }
    if (text.startsWith('null', i)) { i += 4; return null }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400))
    if (!m) err('unexpected token')
    i += m[0].length
    if (!m[2] && !m[3]) {
      const n = Number(m[0])
      return Number.isSafeInteger(n) ? n : BigInt(m[0])
    }
    return Number(m[0])
  }
  const str = () => {
    // find the closing quote, honouring escapes, then let JSON.parse decode the escapes
    const start = i
    i++
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    if (i >= text.length) err('unterminated string')
    i++
    return JSON.parse(text.slice(start, i))
  }
  const v = value()
  ws()
  if (i !== text.length) err('trailing characters')
  return v
}
