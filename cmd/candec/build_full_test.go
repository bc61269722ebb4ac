//go:build !lean

package main

// leanBuild says whether the tests run in the lean build (-tags
// car,lean), where run, replay and watch are the sibling's.
const leanBuild = false
