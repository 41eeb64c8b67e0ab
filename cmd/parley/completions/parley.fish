# fish completion for parley. Install it with
#   parley completion fish > ~/.config/fish/completions/parley.fish
# The candidates come from `parley __complete`, which reads the workspace
# of the current directory (or of the line's -C).

function __parley_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    for line in ($words[1] __complete $words[2..-1] "$cur" 2>/dev/null)
        switch $line
            case :files
                __fish_complete_path $cur
            case :dirs
                __fish_complete_directories $cur
            case '*'
                echo $line
        end
    end
end

complete -c parley -f -a '(__parley_complete)'
