package earlyhup

import (
	"os"
	"os/signal"
	"syscall"
)

// Command is the first argument for which the handler is installed.
const Command = "run"

// hup receives the SIGHUPs caught since the start; nil when the
// program is not Command.
var hup chan os.Signal

func init() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		hup = make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
	}
}

// Take returns the channel of the SIGHUPs caught since the start (one
// waits at most, standing for any number) and true; or, when the
// handler was not installed (another command, or a test), false.
func Take() (<-chan os.Signal, bool) {
	return hup, hup != nil
}
