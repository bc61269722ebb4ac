//go:build !linux

package brokertest

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
