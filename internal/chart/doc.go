// Package chart holds what candec's pictures share: the page size, the
// palette and the fonts, and Write, which renders a gonum plot to SVG or
// PNG. The pictures themselves live beside the figures they show: the
// bench's in benchmarks/report, tune's in internal/tune, the signal plots
// in internal/plot.
//
// # Why SVG first
//
// SVG is text: a chart committed beside the baseline diffs and reviews
// like the Markdown that embeds it, and it scales in a browser. PNG is
// for the places that do not show SVG (some chat tools, image viewers).
package chart
