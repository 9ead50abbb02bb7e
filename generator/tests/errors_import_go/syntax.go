// +groupName=example.com
package v1

type Spec struct {
	Name string `json:"name"`
	Broken [ `json:"broken"` //~ ERROR Go syntax error
}
