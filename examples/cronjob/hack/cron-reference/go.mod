module kube-codegen.example/cronjob/cron-reference

go 1.26

require github.com/robfig/cron v1.2.0
