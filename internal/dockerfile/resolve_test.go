package dockerfile

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

func TestResolveAutomaticArgs(t *testing.T) {
	const text = "FROM img:${TARGETPLATFORM}|${TARGETOS}|${TARGETARCH}|${TARGETVARIANT}|${BUILDPLATFORM}|${BUILDOS}|${BUILDARCH}|${BUILDVARIANT}|${TARGETSTAGE}\n" +
		"ARG TARGETPLATFORM TARGETOS TARGETARCH TARGETVARIANT\n"
	tests := []struct {
		name          string
		target, build v1.Platform
		base          string
		stageArgs     string
	}{
		{"arm/v7 from amd64", armv7, amd64, "img:linux/arm/v7|linux|arm|v7|linux/amd64|linux|amd64||default",
			"ARG TARGETPLATFORM=linux/arm/v7 TARGETOS=linux TARGETARCH=arm TARGETVARIANT=v7"},
		{"arm without variant is v7", v1.Platform{OS: "linux", Architecture: "arm"}, amd64,
			"img:linux/arm/v7|linux|arm|v7|linux/amd64|linux|amd64||default", "ARG TARGETPLATFORM=linux/arm/v7 TARGETOS=linux TARGETARCH=arm TARGETVARIANT=v7"},
		{"arm64", arm64, amd64, "img:linux/arm64|linux|arm64||linux/amd64|linux|amd64||default",
			"ARG TARGETPLATFORM=linux/arm64 TARGETOS=linux TARGETARCH=arm64 TARGETVARIANT="},
		{"arm64/v8 has no variant", v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, arm64,
			"img:linux/arm64|linux|arm64||linux/arm64|linux|arm64||default", "ARG TARGETPLATFORM=linux/arm64 TARGETOS=linux TARGETARCH=arm64 TARGETVARIANT="},
		{"amd64 on arm64 host", amd64, arm64, "img:linux/amd64|linux|amd64||linux/arm64|linux|arm64||default",
			"ARG TARGETPLATFORM=linux/amd64 TARGETOS=linux TARGETARCH=amd64 TARGETVARIANT="},
		{"no build platform means the target", amd64, v1.Platform{}, "img:linux/amd64|linux|amd64||linux/amd64|linux|amd64||default",
			"ARG TARGETPLATFORM=linux/amd64 TARGETOS=linux TARGETARCH=amd64 TARGETVARIANT="},
		{"x86_64 alias", v1.Platform{OS: "linux", Architecture: "x86_64"}, amd64, "img:linux/amd64|linux|amd64||linux/amd64|linux|amd64||default",
			"ARG TARGETPLATFORM=linux/amd64 TARGETOS=linux TARGETARCH=amd64 TARGETVARIANT="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := mustParse(t, text).Resolve(Target{Platform: tt.target, BuildPlatform: tt.build})
			require.NoError(t, err)
			assert.Equal(t, tt.base, st.Base)
			assert.Equal(t, platform.Normalize(tt.target), st.Platform)
			assert.Equal(t, 1, st.Line)
			res, err := st.Apply(v1.Config{}, Contexts{})
			require.NoError(t, err)
			assert.Equal(t, []string{tt.stageArgs}, createdBy(res.Steps))
		})
	}
}

func TestResolveArgPrecedence(t *testing.T) {
	tests := []struct {
		name string
		text string
		args map[string]string
		base string
		env  string // value of E in the resulting Env, when the Dockerfile sets it
	}{
		{name: "global default", text: "ARG V=default\nFROM img:$V\n", base: "img:default"},
		{name: "build arg beats global default", text: "ARG V=default\nFROM img:$V\n", args: map[string]string{"V": "over"}, base: "img:over"},
		{name: "global without value uses build arg", text: "ARG V\nFROM img:$V\n", args: map[string]string{"V": "over"}, base: "img:over"},
		{name: "default modifier in FROM", text: "ARG V\nFROM img:${V:-fallback}\n", base: "img:fallback"},
		{name: "global default built from earlier ARG", text: "ARG A=1\nARG B=${A}2\nFROM img:$B\n", base: "img:12"},
		{name: "global default from automatic arg", text: "ARG TAG=x-$TARGETARCH\nFROM img:$TAG\n", base: "img:x-amd64"},
		{name: "build arg overrides automatic arg", text: "FROM img:$TARGETARCH\n", args: map[string]string{"TARGETARCH": "custom"}, base: "img:custom"},
		{name: "stage default", text: "FROM x\nARG V=stage\nENV E=$V\n", base: "x", env: "stage"},
		{name: "build arg beats stage default", text: "FROM x\nARG V=stage\nENV E=$V\n", args: map[string]string{"V": "arg"}, base: "x", env: "arg"},
		{name: "stage ARG inherits global value", text: "ARG V=global\nFROM x\nARG V\nENV E=$V\n", base: "x", env: "global"},
		{name: "stage default beats global value", text: "ARG V=global\nFROM x\nARG V=stage\nENV E=$V\n", base: "x", env: "stage"},
		{name: "build arg beats global and stage", text: "ARG V=global\nFROM x\nARG V=stage\nENV E=$V\n", args: map[string]string{"V": "arg"}, base: "x", env: "arg"},
		{name: "global not visible without ARG in stage", text: "ARG V=global\nFROM x\nENV E=$V\n", base: "x", env: ""},
		{name: "undeclared build arg not visible", text: "FROM x\nENV E=$W\n", args: map[string]string{"W": "w"}, base: "x", env: ""},
		{name: "automatic arg needs ARG in stage", text: "FROM x\nENV E=$TARGETARCH\n", base: "x", env: ""},
		{name: "stage default expands earlier ARG", text: "FROM x\nARG A=1\nARG B=${A}2\nENV E=$B\n", base: "x", env: "12"},
		{name: "ENV after ARG wins", text: "FROM x\nARG V=arg\nENV V=env\nENV E=$V\n", base: "x", env: "env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mustResolve(t, tt.text, Target{Platform: amd64, BuildPlatform: amd64, Args: tt.args})
			assert.Equal(t, tt.base, st.Base)
			res, err := st.Apply(v1.Config{}, Contexts{})
			require.NoError(t, err)
			want := []string{"PATH=" + defaultPath}
			if strings.Contains(tt.text, "ENV V=") {
				want = append(want, "V=env")
			}
			if strings.Contains(tt.text, "ENV E=") {
				want = append(want, "E="+tt.env)
			}
			assert.Equal(t, want, res.Config.Env, "ARGs are never persisted in Env")
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
		target           v1.Platform
	}{
		{name: "unset ARG in FROM", text: "ARG BASE_IMAGE\n\nFROM $BASE_IMAGE\n",
			want: testName + ":3: FROM $BASE_IMAGE: build arg BASE_IMAGE has no value; set it under args: in helperbuild.yaml (args: {BASE_IMAGE: ...}) or give it a default (ARG BASE_IMAGE=...)"},
		{name: "undeclared ARG in FROM", text: "FROM ${BASE}\n",
			want: testName + `:1: FROM ${BASE}: BASE is not declared; add "ARG BASE" before FROM and set it under args: in helperbuild.yaml`},
		{name: "unset prefix in FROM", text: "ARG REGISTRY\nFROM ${REGISTRY}/alpine\n", want: testName + ":2: FROM ${REGISTRY}/alpine: build arg REGISTRY has no value"},
		{name: "empty value", text: "ARG B=\nFROM $B\n", want: testName + ":2: FROM $B: the base image name is empty"},
		{name: "bad expansion", text: "FROM ${A\n", want: testName + ":1: FROM ${A: "},
		{name: "bad expansion in global ARG", text: "ARG A=${B\nFROM x\n", want: testName + ":1: ARG A: "},
		{name: "other platform", text: "FROM --platform=linux/arm64 alpine\n", target: amd64,
			want: testName + ":1: FROM --platform=linux/arm64 is linux/arm64, but this build is for linux/amd64"},
		{name: "build platform differs", text: "FROM --platform=$BUILDPLATFORM alpine\n", target: armv7,
			want: testName + ":1: FROM --platform=$BUILDPLATFORM is linux/amd64, but this build is for linux/arm/v7"},
		{name: "bad platform", text: "FROM --platform=nope/x/y/z alpine\n", want: testName + ":1: FROM --platform=nope/x/y/z: "},
		{name: "no target", text: "FROM alpine\n", target: v1.Platform{OS: "linux"}, want: testName + `: target platform "linux/" needs an OS and an architecture`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := tt.target
			if target.OS == "" {
				target = amd64
			}
			_, err := mustParse(t, tt.text).Resolve(Target{Platform: target, BuildPlatform: amd64})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestResolveStage(t *testing.T) {
	st := mustResolve(t, "# comment\nARG TAG=3.20\nFROM --platform=$TARGETPLATFORM alpine:$TAG AS Final\n", Target{Platform: arm64})
	assert.Equal(t, "alpine:3.20", st.Base)
	assert.Equal(t, "final", st.Name)
	assert.Equal(t, 3, st.Line)

	st = mustResolve(t, "FROM scratch\n", Target{Platform: armv7})
	assert.Equal(t, "scratch", st.Base)
	assert.Equal(t, armv7, st.Platform)
}
