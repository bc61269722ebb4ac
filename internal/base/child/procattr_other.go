//go:build !linux

package child

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
