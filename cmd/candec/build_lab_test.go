//go:build !car

package main

// carBuild says the tests run in the car's build (-tags car): here, the
// developer's.
const carBuild = false
