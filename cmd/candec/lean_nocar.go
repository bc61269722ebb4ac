//go:build lean && !car

package main

// The lean build is made on top of the car's: build it with -tags
// car,lean. The developer's commands need what lean leaves out.
var _ = leanNeedsTheCarTag_buildWithTagsCarLean
