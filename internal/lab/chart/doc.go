// Package chart is where candec's pictures are drawn from: the bench
// report's (benchmarks/report), tune's (internal/tune) and the signal
// plots (internal/lab/plot) use its primitives and none of their own. It
// holds the look (New: title, axes, fonts; the palette; LegendAt; the
// text widths every layout is made for, WideText), the scales' ticks
// (PlainTicks, LogTicks, ThousandsTicks), the series (Points, Line,
// HBars, Labels, Bands), the panels one above the other (Stack) and
// Write, which renders a picture to SVG or PNG. What each picture shows
// lives beside the figures it shows.
//
// # Why SVG first
//
// SVG is text: a chart committed beside the baseline diffs and reviews
// like the Markdown that embeds it, and it scales in a browser. PNG is
// for the places that do not show SVG (some chat tools, image viewers).
package chart
