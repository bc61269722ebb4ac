// Package termtext makes text from a file or the network safe to print:
// every command passes such text (a DBC's units and labels, an
// envelope's label, a topic, a token an error quotes) through Clean or
// Quote before it reaches a terminal or a log.
//
// # The rule
//
// A character that strconv.IsPrint accepts is kept, so "°C" and "Ω" stay
// as they are. Anything else is written as a visible escape, the way Go's
// %q writes it: a C0 control character as \n, \t or \x1b, DEL as \x7f, a
// C1 control character as \u009b, a format character that can reorder or
// hide text (U+202E, U+2066) as \u202e, and a byte that is not part of
// valid UTF-8 as \xff. No escape sequence, line break or bidirectional
// override reaches the terminal.
//
// # Errors
//
// An error that quotes outside text quotes at most MaxQuote characters
// (Quote): a 10 MB token in a DBC, a policy or a config file gives an
// error line of a hundred characters, not of 10 MB. The library packages
// that import only the standard library (dbc, capture, pipeline,
// service) keep a copy of Quote of a few lines, named quote; a test here
// checks that each copy is the same as Quote.
package termtext
