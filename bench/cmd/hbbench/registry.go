package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// registry is a docker-registry (CNCF distribution) process bound to
// 127.0.0.1 with its storage in a temporary directory.
type registry struct {
	Addr    string // 127.0.0.1:PORT
	Storage string
	cmd     *exec.Cmd
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startRegistry writes a config into dir and starts `docker-registry serve`,
// waiting (bounded) until GET /v2/ answers 200. With ownSession it runs in
// a session of its own (an autogroup of its own: a registry on another
// host does not take its CPU from the command's share), else in hbbench's.
func startRegistry(ctx context.Context, dir string, ownSession bool) (*registry, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &registry{Addr: fmt.Sprintf("127.0.0.1:%d", port), Storage: filepath.Join(dir, "storage")}
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  secret: helperbuild-bench-secret
`, r.Storage, r.Addr)
	cfgPath := filepath.Join(dir, "registry.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		return nil, err
	}
	r.cmd = exec.Command("docker-registry", "serve", cfgPath)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if ownSession {
		r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := r.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("docker-registry: %w (install it: apt-get install docker-registry)", err)
	}
	go func() { _ = r.cmd.Wait(); logf.Close() }()
	client := &http.Client{Timeout: time.Second}
	for range 200 { // 200 x 50 ms
		if ctx.Err() != nil {
			break
		}
		resp, err := client.Get("http://" + r.Addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.Stop()
	return nil, fmt.Errorf("docker-registry on %s: not ready after 10 s (log: %s)", r.Addr, logf.Name())
}

// CPU is the registry process's own user+system time so far (utime+stime
// of /proc/PID/stat, in clock ticks of 10 ms); 0 if it cannot be read. The
// registry is idle between measured commands, so the difference around one
// command is the CPU the registry spent serving it (hashing and storing
// uploads, answering HEADs), which runs on the same CPUs as the command.
func (r *registry) CPU() time.Duration {
	if r == nil || r.cmd == nil || r.cmd.Process == nil {
		return 0
	}
	return time.Duration(statTicks("/proc/"+strconv.Itoa(r.cmd.Process.Pid)+"/stat", 11, 12)) * clockTick
}

// PID is the registry process's; 0 if it is not running.
func (r *registry) PID() int {
	if r == nil || r.cmd == nil || r.cmd.Process == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// Stop kills the registry by its PID.
func (r *registry) Stop() {
	if r == nil || r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
}
