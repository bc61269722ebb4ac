// Package frame defines the CAN frame that every other candec package
// passes around: a plain value with the reception timestamp, the
// arbitration ID and its format flags, the bus index and up to 64 data
// bytes.
package frame
