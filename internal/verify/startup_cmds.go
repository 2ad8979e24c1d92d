package verify

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// The chart's podSecurityContext (runAsUser, fsGroup) and the executors'
// paths; docs/startup-run.md says where each comes from.
const (
	chartUID       = 100
	chartFSGroup   = 65533
	chartCmd       = "/usr/bin/dumb-init -- /bin/bash /configmaps/entrypoint"
	runnerConfig   = runnerHome + "/.gitlab-runner"
	helperCA       = "/etc/gitlab-runner/certs/ca.crt"
	dockerCmd      = "/usr/bin/dumb-init /entrypoint gitlab-runner-build"
	shellDetectCmd = "sh -c <the Kubernetes executor's shell detection>"
)

// runnerStartCmds is the Helm chart's start of the runner image.
func runnerStartCmds(d startDirs, rootfs string) []startCmd {
	gid, home := passwdEntry(rootfs, chartUID)
	groups := []int{chartFSGroup}
	return []startCmd{{
		label: "runner start-up", first: chartCmd, last: "exec /entrypoint run", version: true,
		path: "/usr/bin/dumb-init", args: []string{"--", "/bin/bash", "/configmaps/entrypoint"},
		user: &sandbox.User{UID: chartUID, GID: gid, Groups: groups},
		mount: []sandbox.Mount{
			{Source: d.configmaps, Target: "/configmaps", ReadOnly: true},
			{Source: d.secrets, Target: "/secrets", ReadOnly: true},
			{Source: d.configDir, Target: runnerConfig},
		},
		env: []string{"HOME=" + home, "HOSTNAME=sandbox", "CI_SERVER_URL=https://gitlab.example.com", "RUNNER_EXECUTOR=kubernetes",
			"REGISTER_LOCKED=true", "RUNNER_TAG_LIST=", "KUBERNETES_NAMESPACE=default"},
	}}
}

// helperStartCmds are the executors' starts of the helper image, as root:
// the Kubernetes executor's shell detection feeding a stage through
// gitlab-runner-build, and the Docker executor's ENTRYPOINT with
// gitlab-runner-build and a custom CA.
func helperStartCmds(d startDirs, sh string) []startCmd {
	k8s := startCmd{
		label: "helper start-up (Kubernetes executor)", first: shellDetectCmd, last: "build directory", version: true,
		path: sh, args: []string{"-c", startScript("shell-detection")}, stdin: startScript("stage-command"),
		mount: []sandbox.Mount{
			{Source: d.scripts, Target: "/scripts-helperbuild", ReadOnly: true},
			{Source: d.logs, Target: "/logs-helperbuild"},
		},
		env: []string{"HOME=/root", "HOSTNAME=sandbox"},
	}
	docker := startCmd{
		label: "helper start-up (Docker executor)", first: dockerCmd, last: "build directory", version: true,
		path: "/usr/bin/dumb-init", args: []string{"/entrypoint", "gitlab-runner-build"}, stdin: startScript("step_script"),
		mount: []sandbox.Mount{{Source: d.caFile, Target: helperCA, ReadOnly: true}},
		env:   []string{"HOME=/root", "HOSTNAME=sandbox"},
	}
	return []startCmd{k8s, docker}
}

// startUp runs the start-up commands of the contract on the unpacked tree.
func (r *runCheck) startUp(ctx context.Context, contract, dir string) ([]Check, error) {
	if !sandbox.CanRunAs() {
		return nil, fmt.Errorf("%w: the start-up runs of --contract need helperbuild to run as root (only root can map uid 100, "+
			"group 65533 and the image's owners into a sandbox), so nothing was run", sandbox.ErrUnavailable)
	}
	d, err := makeStartDirs(dir)
	if err != nil {
		return nil, fmt.Errorf("start-up mounts: %w", err)
	}
	defer os.RemoveAll(dir)
	var cmds []startCmd
	if contract == ContractRunner {
		cmds = runnerStartCmds(d, r.rootfs)
	} else {
		sh, ok := r.lookPath("sh")
		if !ok {
			r.startFailed(startCmd{label: "helper start-up (Kubernetes executor)"}, StepResult{Step: shellDetectCmd, User: "root", Status: -1},
				"sh is not on the image's PATH")
			sh = ""
		}
		cmds = helperStartCmds(d, sh)
		if sh == "" {
			cmds = cmds[1:]
		}
	}
	for _, c := range cmds {
		if err := r.start(ctx, c); err != nil {
			return nil, err
		}
	}
	how := "under " + path.Base(r.qemu)
	if r.qemu == "" {
		how = "natively"
	}
	return r.sf.done("started " + how + " in a sandbox: " + strings.Join(r.startOK, "; ")), nil
}

// lookPath finds a command on the image's PATH as a runtime would.
func (r *runCheck) lookPath(name string) (string, bool) {
	p, _ := envPath(r.env)
	for _, dir := range strings.Split(p, ":") {
		full := path.Join(dir, name)
		if _, n, err := r.t.Resolve(full, true); err == nil && n.IsRegular() && n.Mode&0o111 != 0 {
			return full, true
		}
	}
	return "", false
}

// passwdEntry returns the primary gid and home of uid in the image's
// /etc/passwd (0 and "/" without one), as a container runtime sets them
// when the pod names no runAsGroup.
func passwdEntry(rootfs string, uid int) (gid int, home string) {
	root, err := os.OpenRoot(rootfs)
	if err != nil {
		return 0, "/"
	}
	defer root.Close()
	f, err := root.Open("etc/passwd")
	if err != nil {
		return 0, "/"
	}
	defer f.Close()
	b := make([]byte, maxText)
	n, _ := f.Read(b)
	sc := bufio.NewScanner(bytes.NewReader(b[:n]))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 6 || fields[2] != strconv.Itoa(uid) {
			continue
		}
		if g, err := strconv.Atoi(fields[3]); err == nil && g >= 0 && g < sandbox.MappedIDs {
			return g, fields[5]
		}
		return 0, fields[5]
	}
	return 0, "/"
}
