package dockerfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"
)

// FuzzParse: Parse, Resolve with a fixed target and Apply without contexts
// (so nothing reads the file system) never panic, and errors name the file.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"FROM alpine\n",
		"ARG BASE_IMAGE\nFROM $BASE_IMAGE\nARG TARGETOS\nARG TARGETARCH\nCOPY --from=binary_dir --chmod=755 gitlab-runner-helper.${TARGETOS}-${TARGETARCH} /usr/bin/gitlab-runner-helper\n",
		"# syntax=docker/dockerfile:1\n# escape=`\nFROM scratch AS x\nENV A=1 B=$A \\\n C=`$A\nLABEL \"a b\"=c\nUSER 1:2\nWORKDIR a/../b\n",
		"FROM alpine\nCMD [\"sh\"]\nENTRYPOINT echo ${X:-y}\nSHELL [\"/bin/bash\", \"-c\"]\nEXPOSE 80 1-3/udp [::1]:80:80\nVOLUME [\"/v\"]\nSTOPSIGNAL 9\n",
		"FROM alpine\nHEALTHCHECK --interval=1s CMD true\nHEALTHCHECK NONE\nMAINTAINER m\nONBUILD RUN x\n",
		"FROM --platform=$TARGETPLATFORM alpine\nARG A=${TARGETARCH:+x}\nADD --chown=1 a* /b/\nCOPY <<EOF /x\nhi\nEOF\n",
		"ARG A=${B\nFROM $A\n",
		"FROM a\n# check=skip=all\nENV A=b\nRUN x\nFROM b\n",
		"FROM a\nCOPY --from=0 /a /b\nCOPY --parents a /b\nADD https://x/y /z\n",
	}
	for _, name := range []string{"runner-helper.Dockerfile", "runner.Dockerfile"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		seeds = append(seeds, string(data))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	target := Target{Platform: armv7, BuildPlatform: amd64, Args: map[string]string{"BASE_IMAGE": "alpine", "A": "a"}}
	f.Fuzz(func(t *testing.T, text string) {
		file, err := Parse("fuzz", strings.NewReader(text))
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz:"), "error %q names the file", err)
			return
		}
		st, err := file.Resolve(target)
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz:"), "error %q names the file", err)
			return
		}
		if _, err := st.Apply(v1.Config{}, Contexts{}); err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz:"), "error %q names the file", err)
		}
	})
}
