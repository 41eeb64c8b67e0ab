# bash completion for parley. Load it with
#   source <(parley completion bash)
# in ~/.bashrc. The candidates come from `parley __complete`, which reads
# the workspace of the current directory (or of the line's -C).

_parley() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local out line files=
    out=$("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return 0
    COMPREPLY=()
    while IFS= read -r line; do
        case $line in
        :files) files=-f ;;
        :dirs) files=-d ;;
        '') ;;
        *) COMPREPLY+=("${line%%$'\t'*}") ;;
        esac
    done <<<"$out"
    if [[ -n $files ]]; then
        [[ $cur == = ]] && cur=
        while IFS= read -r line; do
            [[ -n $line ]] && COMPREPLY+=("$line")
        done < <(compgen "$files" -- "$cur")
        compopt -o filenames 2>/dev/null
    fi
    return 0
}

complete -F _parley parley
