package tokenauth

import "strings"

// Actions a token can grant on a repository, distribution's names.
const (
	Pull   = "pull"
	Push   = "push"
	Delete = "delete"
)

// User is an account the realm accepts, with what it may do per repository.
type User struct {
	Name, Password string
	// Kind names the account for logs: "admin", "ci-job", "deploy-token".
	Kind string
	// Grant returns the actions the user has on repo (a subset of Pull,
	// Push, Delete; nil: none).
	Grant func(repo string) []string
}

// Admin may pull, push and delete everywhere.
func Admin(name, password string) User {
	return User{Name: name, Password: password, Kind: "admin",
		Grant: func(string) []string { return []string{Pull, Push, Delete} }}
}

// CIJobUser is the user name GitLab CI jobs log in with.
const CIJobUser = "gitlab-ci-token"

// CIJob is a GitLab CI job's login: gitlab-ci-token with the job token as
// password; push and pull on its project's repositories (project and
// project/...), pull elsewhere, as GitLab grants a job token (with the
// projects' allowlists open); never delete.
func CIJob(jobToken, project string) User {
	return User{Name: CIJobUser, Password: jobToken, Kind: "ci-job",
		Grant: func(repo string) []string {
			if inProject(repo, project) {
				return []string{Pull, Push}
			}
			return []string{Pull}
		}}
}

// DeployToken is a read-only deploy token of project
// (read_registry only): pull on the project's repositories, nothing else.
func DeployToken(name, password, project string) User {
	return User{Name: name, Password: password, Kind: "deploy-token",
		Grant: func(repo string) []string {
			if inProject(repo, project) {
				return []string{Pull}
			}
			return nil
		}}
}

// inProject reports whether repo is project's repository or one below it.
func inProject(repo, project string) bool {
	return repo == project || strings.HasPrefix(repo, project+"/")
}
