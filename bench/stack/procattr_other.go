//go:build !linux

package stack

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
