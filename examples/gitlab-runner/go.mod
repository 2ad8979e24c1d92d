module example.com/gitlab-runner

go 1.22
