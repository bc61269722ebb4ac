// Package dbc loads DBC files and compiles them into an immutable
// Database indexed by CAN ID.
package dbc
